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
