# METADATA
# title: Secret rules
# description: |
#   Which values are secrets (docs/SECURITY.md R6: each key of secretKeys names env[key] and
#   headers[key]; header names in always_secret_headers and env keys ending in one of
#   always_secret_env_suffixes are secrets even when secretKeys forgets them), and which entries a per-user server
#   (credentials: user) or a server with a stored token may not keep. A stored token is a
#   secret whatever a policy says. A credential these rules remove is marked "secret": it is
#   not rendered but stays masked in logs. The lists are data.tunables.secrets.
package loadout.secrets

import data.tunables.secrets as conf

secret contains {"server": i, "field": "env", "key": key} if {
	some i, s in input.servers
	some key, value in s.env
	value != ""
	secret_env(s, key)
}

secret_env(s, key) if key in s.secretKeys

secret_env(_, key) if strings.any_suffix_match(upper(key), conf.always_secret_env_suffixes)

# Header names are case-insensitive (RFC 9110): secretKeys "authorization" names the header
# Authorization.
secret contains {"server": i, "field": "headers", "key": name} if {
	some i, s in input.servers
	some name, value in s.headers
	value != ""
	secret_header(s, lower(name))
}

secret_header(s, name) if {
	some key in s.secretKeys
	lower(key) == name
}

secret_header(_, name) if name in conf.always_secret_headers

# An env key or header named like a credential that no rule makes a secret is rendered as it
# is and shown in clear in logs: the run is told which key, and how to mark it. Only
# secretKeys (and the always_secret_* lists) make a secret, so an ordinary value that happens
# to sit under such a name is never masked; the name lists are looks_secret_env_suffixes and
# looks_secret_header_suffixes.
warn contains {
	"server": i, "code": "env_looks_secret",
	"msg": sprintf("env key %q looks like a credential but is not a secret: its value is written and logged in clear; add %q to the server's secretKeys (or a suffix to always_secret_env_suffixes in the policy's tunables)", [key, key]),
} if {
	some i, s in input.servers
	some key, value in s.env
	value != ""
	not secret_env(s, key)
	looks_secret_env(upper(key))
}

warn contains {
	"server": i, "code": "env_looks_secret",
	"msg": sprintf("header %q looks like a credential but is not a secret: its value is written and logged in clear; add %q to the server's secretKeys (or to always_secret_headers in the policy's tunables)", [name, name]),
} if {
	some i, s in input.servers
	some name, value in s.headers
	value != ""
	not secret_header(s, lower(name))
	looks_secret_header(lower(name))
}

# A suffix such as _TOKEN matches TOKEN itself too.
looks_secret_env(key) if strings.any_suffix_match(key, conf.looks_secret_env_suffixes)

looks_secret_env(key) if concat("", ["_", key]) in conf.looks_secret_env_suffixes

looks_secret_header(name) if strings.any_suffix_match(name, conf.looks_secret_header_suffixes)

looks_secret_header(name) if concat("", ["-", name]) in conf.looks_secret_header_suffixes

drop contains {
	"server": i, "field": "env", "key": key, "code": "credentials_user", "secret": true,
	"msg": "a per-user server gets this from the run's own token",
} if {
	some i, s in input.servers
	s.credentials == "user"
	some key, _ in s.env
	upper(key) in conf.user_credential_env
}

drop contains {
	"server": i, "field": "headers", "key": name, "code": "credentials_user", "secret": true,
	"msg": "a per-user server gets this from the run's own token",
} if {
	some i, s in input.servers
	s.credentials == "user"
	some name, _ in s.headers
	lower(name) in conf.user_credential_headers
}

drop contains {
	"server": i, "field": "headers", "key": name, "code": "replaced_by_token", "secret": true,
	"msg": "the run's stored token supplies it",
} if {
	some i, s in input.servers
	s.transport == "http"
	s.hasToken
	some name, _ in s.headers
	lower(name) == "authorization"
}
