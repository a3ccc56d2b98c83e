package loadout.secrets_test

import data.loadout.secrets

user_srv := {"id": "a", "transport": "http", "credentials": "user"}

plain_http := {"id": "a", "transport": "http", "credentials": ""}

plain_stdio := {"id": "a", "transport": "stdio", "credentials": ""}

header_cases := {
	"per-user server loses Authorization": {
		"srv": user_srv, "f": {}, "h": {"key": "Authorization", "userCredential": true, "tokenHeader": true},
		"want": ["credentials_user"],
	},
	"per-user server keeps other headers": {"srv": user_srv, "f": {}, "h": {"key": "X-Trace"}, "want": []},
	"stored token replaces Authorization": {
		"srv": plain_http, "f": {"token": true}, "h": {"key": "Authorization", "userCredential": true, "tokenHeader": true},
		"want": ["replaced_by_token"],
	},
	"no token, Authorization kept": {
		"srv": plain_http, "f": {}, "h": {"key": "Authorization", "userCredential": true, "tokenHeader": true},
		"want": [],
	},
	"stdio token goes to env, not headers": {
		"srv": plain_stdio, "f": {"token": true}, "h": {"key": "Authorization", "userCredential": true, "tokenHeader": true},
		"want": [],
	},
}

test_header_rules[name] if {
	some name, tc in header_cases
	[r | r := secrets.header_reason(tc.srv, tc.f, tc.h)] == tc.want
}

test_per_user_server_loses_configured_token_env if {
	secrets.env_reason({"credentials": "user"}, {"key": "MCP_ACCESS_TOKEN", "userCredential": true}) == "credentials_user"
}

test_shared_server_keeps_env if {
	not secrets.env_reason({"credentials": "shared"}, {"key": "MCP_ACCESS_TOKEN", "userCredential": true})
}

stdio_srv := {"id": "fs", "transport": "stdio"}

# The facts of env K=v1, EMPTY="", OTHER=v2 and header K=h1 with secretKeys [K, EMPTY, MISSING]:
# OTHER has no fact and is not listed.
stdio_facts := {
	"env": [{"key": "K", "secretNamed": true}, {"key": "EMPTY", "secretNamed": true, "valueEmpty": true}],
	"headers": [{"key": "K", "secretNamed": true}],
}

test_secret_keys_name_env_and_headers_both if {
	got := secrets.server_secrets(3, stdio_srv, stdio_facts, [])
	got == [
		{"server": 3, "field": "env", "key": "K"},
		{"server": 3, "field": "headers", "key": "K"},
	]
}

test_dropped_entries_are_not_secrets if {
	got := secrets.server_secrets(0, stdio_srv, stdio_facts, [{"field": "env", "key": "K"}, {"field": "headers", "key": "K"}])
	got == []
}

test_a_drop_is_per_field if {
	got := secrets.server_secrets(0, stdio_srv, stdio_facts, [{"field": "env", "key": "K"}])
	got == [{"server": 0, "field": "headers", "key": "K"}]
}

test_stored_token_is_always_secret if {
	got := secrets.server_secrets(0, {"transport": "stdio"}, {"token": true}, [])
	got == [{"server": 0, "field": "token", "key": "MCP_ACCESS_TOKEN"}]
	got_http := secrets.server_secrets(1, {"transport": "http"}, {"token": true}, [])
	got_http == [{"server": 1, "field": "token", "key": "Authorization"}]
}

test_always_secret_headers if {
	f := {"headers": [{"key": "Authorization", "tokenHeader": true}]}
	secrets.server_secrets(0, {"transport": "http"}, f, []) == []
	got := secrets.server_secrets(0, {"transport": "http"}, {"headers": [{"key": "Authorization", "alwaysSecret": true}]}, [])
	got == [{"server": 0, "field": "headers", "key": "Authorization"}]
}
