package loadout.secrets_test

import data.loadout.secrets

user_srv := {"id": "a", "transport": "http", "credentials": "user"}

plain_http := {"id": "a", "transport": "http", "credentials": ""}

plain_stdio := {"id": "a", "transport": "stdio", "credentials": ""}

header_cases := {
	"per-user server loses Authorization": {
		"srv": user_srv, "f": {}, "h": {"lower": "authorization"},
		"want": ["credentials_user"],
	},
	"per-user server keeps other headers": {"srv": user_srv, "f": {}, "h": {"lower": "x-trace"}, "want": []},
	"stored token replaces Authorization": {
		"srv": plain_http, "f": {"token": true}, "h": {"lower": "authorization"},
		"want": ["replaced_by_token"],
	},
	"no token, Authorization kept": {"srv": plain_http, "f": {}, "h": {"lower": "authorization"}, "want": []},
	"stdio token goes to env, not headers": {
		"srv": plain_stdio, "f": {"token": true}, "h": {"lower": "authorization"},
		"want": [],
	},
}

test_header_rules[name] if {
	some name, tc in header_cases
	[r | r := secrets.header_reason(tc.srv, tc.f, tc.h)] == tc.want
}

test_per_user_server_loses_configured_token_env if {
	secrets.env_reason({"credentials": "user"}, {"upper": "MCP_ACCESS_TOKEN"}) == "credentials_user"
}

test_shared_server_keeps_env if {
	not secrets.env_reason({"credentials": "shared"}, {"upper": "MCP_ACCESS_TOKEN"})
}

stdio_srv := {
	"id": "fs", "transport": "stdio",
	"env": [{"name": "K", "value": "v1"}, {"name": "EMPTY", "value": ""}, {"name": "OTHER", "value": "v2"}],
	"headers": [{"name": "K", "value": "h1"}],
	"secretKeys": ["K", "EMPTY", "MISSING"],
}

stdio_facts := {"env": [{"upper": "K"}, {"upper": "EMPTY"}, {"upper": "OTHER"}], "headers": [{"lower": "k"}]}

test_secret_keys_name_env_and_headers_both if {
	got := secrets.server_secrets(3, stdio_srv, stdio_facts, [], [])
	got == [
		{"server": 3, "field": "env", "key": "K"},
		{"server": 3, "field": "headers", "key": "K"},
	]
}

test_dropped_entries_are_not_secrets if {
	got := secrets.server_secrets(0, stdio_srv, stdio_facts, [{"key": "K"}], [{"key": "K"}])
	got == []
}

test_stored_token_is_always_secret if {
	got := secrets.server_secrets(0, {"transport": "stdio", "env": [], "headers": [], "secretKeys": []}, {"token": true}, [], [])
	got == [{"server": 0, "field": "token", "key": "MCP_ACCESS_TOKEN"}]
	got_http := secrets.server_secrets(1, {"transport": "http", "env": [], "headers": [], "secretKeys": []}, {"token": true}, [], [])
	got_http == [{"server": 1, "field": "token", "key": "Authorization"}]
}

test_always_secret_headers_are_tunable if {
	srv := {"transport": "http", "env": [], "headers": [{"name": "Authorization", "value": "Bearer x"}], "secretKeys": []}
	f := {"headers": [{"lower": "authorization"}]}
	secrets.server_secrets(0, srv, f, [], []) == []
	got := secrets.server_secrets(0, srv, f, [], []) with data.tunables.secrets.always_secret_headers as ["AUTHORIZATION"]
	got == [{"server": 0, "field": "headers", "key": "Authorization"}]
}
