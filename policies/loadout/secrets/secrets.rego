# METADATA
# title: Secret rules
# description: |
#   Which values are secrets (each key of secretKeys names env[key] and headers[key], both, R6;
#   header names in always_secret_headers; the run's stored token), and which configured entries
#   a per-user server (credentials: user) or a server with a stored token may not keep.
#   Tunables are in data.tunables.secrets.
package loadout.secrets

import data.tunables.secrets as conf

always_secret_headers := {lower(h) | some h in conf.always_secret_headers}

user_headers := {lower(h) | some h in conf.user_credential_headers}

user_env := {upper(k) | some k in conf.user_credential_env}

# Where the run's stored token goes, per transport.
token_keys := {"stdio": "MCP_ACCESS_TOKEN", "http": "Authorization"}

# env_reason(srv, e) is why env entry e (facts) of server srv is removed; undefined if kept.
env_reason(srv, e) := "credentials_user" if {
	srv.credentials == "user"
	user_env[e.upper]
}

# header_reason(srv, f, h) is why header h (facts) of server srv (facts f) is removed: a
# per-user server's credential header, or the Authorization header of an http server whose
# stored token supplies it; undefined if kept.
header_reason(srv, f, h) := "credentials_user" if {
	srv.credentials == "user"
	user_headers[h.lower]
} else := "replaced_by_token" if {
	f.token
	srv.transport == "http"
	h.lower == "authorization"
}

# server_secrets(i, srv, f, env_drops, header_drops) lists the secret entries of server i
# that survive its drops: env and header values named by secretKeys (both fields) or by
# always_secret_headers, when non-empty, then the stored token.
server_secrets(i, srv, f, env_drops, header_drops) := array.concat(array.concat(env, headers), token) if {
	env := [{"server": i, "field": "env", "key": p.name} |
		some p in srv.env
		p.name in srv.secretKeys
		p.value != ""
		not dropped(env_drops, p.name)
	]
	headers := [{"server": i, "field": "headers", "key": p.name} |
		some j, p in srv.headers
		secret_header(srv, p.name, f.headers[j])
		p.value != ""
		not dropped(header_drops, p.name)
	]
	token := [{"server": i, "field": "token", "key": token_keys[srv.transport]} | f.token]
}

secret_header(srv, name, _) if name in srv.secretKeys

secret_header(_, _, h) if always_secret_headers[h.lower]

# dropped(drops, key) holds when one of drops removes key.
dropped(drops, key) if {
	some d in drops
	d.key == key
}
