package loadout.secrets_test

import data.fixtures.hostile
import data.loadout.secrets

# secret_entries is every entry the rules declare a secret, as "id field key".
secret_entries := {sprintf("%s %s %s", [hostile.servers[x.server].id, x.field, x.key]) |
	some x in secrets.secret with input as hostile
}

# Header names match secretKeys in any case; an empty value is no secret.
# Header names match secretKeys in any case; an empty value is no secret; Authorization is a
# secret on every server whether secretKeys lists it or not (always_secret_headers).
test_secret_keys_name_env_and_headers if {
	secret_entries == {
		"env-rules env FS_TOKEN",
		"header-rules headers authorization",
		"per-user headers Authorization",
		"with-token headers Authorization",
	}
}

test_secret_env_suffixes_are_tunable if {
	s := secrets.secret with input as hostile with data.tunables.secrets.always_secret_env_suffixes as ["_LEVEL"]
	{sprintf("%s %s", [hostile.servers[x.server].id, x.key]) | some x in s; x.field == "env"} == {"env-rules FS_TOKEN", "env-rules LOG_LEVEL"}
}

test_no_header_is_secret_without_the_defaults if {
	s := secrets.secret with input as hostile with data.tunables.secrets.always_secret_headers as []
	{hostile.servers[x.server].id | some x in s; x.field == "headers"} == {"header-rules"}
}

test_always_secret_headers_are_tunable if {
	s := secrets.secret with input as hostile with data.tunables.secrets.always_secret_headers as ["x-trace"]
	{hostile.servers[x.server].id | some x in s; x.key == "X-Trace"} == {"per-user", "with-token"}
}

dropped := {sprintf("%s %s %s %v", [hostile.servers[x.server].id, x.field, x.key, x.secret]) |
	some x in secrets.drop with input as hostile
}

# A per-user server's configured credentials and the Authorization a stored token replaces
# are removed, and stay secret (masked in logs although not rendered).

test_credential_drops if {
	dropped == {
		"per-user headers Authorization true",
		"per-user-stdio env MCP_ACCESS_TOKEN true",
		"per-user-stdio env mcp_access_token true",
		"with-token headers Authorization true",
	}
}

test_clean_request_keeps_its_credentials if {
	count(secrets.drop) == 0 with input as data.fixtures.clean
	count(secrets.secret) == 2 with input as data.fixtures.clean
}

# looks_secret names an env key or header per server for the env_looks_secret warnings.
looks_secret(inp) := {sprintf("%s %s", [inp.servers[w.server].id, w.msg]) |
	some w in secrets.warn with input as inp
	w.code == "env_looks_secret"
}

warned_keys(inp) := {sprintf("%s %s", [inp.servers[w.server].id, key]) |
	some w in secrets.warn with input as inp
	w.code == "env_looks_secret"
	some key in regex.find_n(`"[^"]+"`, w.msg, 1)
}

looks_input := {"servers": [
	{
		"id": "env", "secretKeys": ["LISTED_TOKEN"],
		"env": {
			"API_KEY": "k", "GH_TOKEN": "t", "DB_PASSWORD": "p", "APP_SECRET": "s", "token": "t",
			"OPENAIAPIKEY": "k", "MY_PASS": "p", "AWS_CREDENTIALS": "c", "LISTED_TOKEN": "t",
			"EMPTY_TOKEN": "", "LOG_LEVEL": "debug", "TOKENIZER": "bpe", "MONKEY": "m",
		},
		"headers": {},
	},
	{
		"id": "headers", "secretKeys": ["x-listed-token"],
		"env": {},
		"headers": {
			"X-Auth-Token": "t", "X-Api-Key": "k", "X-Service-Key": "k", "Private-Token": "t", "Authorization": "a",
			"X-Listed-Token": "t", "X-Client": "c", "Token": "t", "X-Tokenizer": "bpe",
		},
	},
]}

# Every key named like a credential and not made a secret is warned about, once, with the
# way to mark it; a listed, an empty, an always-secret (X-Api-Key) or an ordinary key is not.
test_env_looks_secret_warns if {
	warned_keys(looks_input) == {
		`env "API_KEY"`, `env "GH_TOKEN"`, `env "DB_PASSWORD"`, `env "APP_SECRET"`, `env "token"`,
		`env "OPENAIAPIKEY"`, `env "MY_PASS"`, `env "AWS_CREDENTIALS"`,
		`headers "X-Auth-Token"`, `headers "X-Service-Key"`, `headers "Private-Token"`, `headers "Token"`,
	}
	every m in looks_secret(looks_input) {
		contains(m, "add ")
		contains(m, "secretKeys")
	}
}

# The warning names no key a secret rule already covers: always_secret_env_suffixes enforce.
test_env_looks_secret_skips_enforced_suffixes if {
	w := warned_keys(looks_input) with data.tunables.secrets.always_secret_env_suffixes as ["_TOKEN"]
	not `env "GH_TOKEN"` in w
	`env "API_KEY"` in w
}

# The suffix lists are the security team's: emptied, nothing is warned about.
test_env_looks_secret_is_tunable if {
	count(looks_secret(looks_input)) == 0 with data.tunables.secrets.looks_secret_env_suffixes as []
		with data.tunables.secrets.looks_secret_header_suffixes as []
	warned_keys(looks_input) == {`env "LOG_LEVEL"`} with data.tunables.secrets.looks_secret_env_suffixes as ["_LEVEL"]
		with data.tunables.secrets.looks_secret_header_suffixes as []
}
