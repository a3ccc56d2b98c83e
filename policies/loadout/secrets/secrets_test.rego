package loadout.secrets_test

import data.loadout.facts_test
import data.loadout.secrets

# header_reasons(srv, f, names) are the secret rules' codes, first first, that remove header
# "Authorization" of server 0 (request srv, server facts f) whose entry facts are names.
header_reasons(srv, f, names) := facts_test.reasons(v.drop.headers, [0, "Authorization"]) if {
	fs := object.union(facts_test.entry_facts("headers", [0, "Authorization"], names), f)
	v := secrets.verdict with input as {"request": {"mcpServers": [srv]}, "facts": fs}
}

user_srv := {"id": "a", "credentials": "user"}

plain_srv := {"id": "a", "credentials": ""}

authorization := {"userCredential", "tokenHeader"}

header_cases := {
	"per-user server loses Authorization": {
		"srv": user_srv, "f": {"credentialed": {0}, "http": {0}}, "h": authorization,
		"want": ["credentials_user"],
	},
	"per-user server keeps other headers": {"srv": user_srv, "f": {"credentialed": {0}, "http": {0}}, "h": set(), "want": []},
	"per-user rule before the token rule": {
		"srv": user_srv, "f": {"credentialed": {0}, "http": {0}, "token": {0}}, "h": authorization,
		"want": ["credentials_user", "replaced_by_token"],
	},
	"stored token replaces Authorization": {
		"srv": plain_srv, "f": {"http": {0}, "token": {0}}, "h": authorization,
		"want": ["replaced_by_token"],
	},
	"no token, Authorization kept": {"srv": plain_srv, "f": {"http": {0}}, "h": authorization, "want": []},
	"stdio token goes to env, not headers": {"srv": plain_srv, "f": {"token": {0}}, "h": authorization, "want": []},
}

test_header_rules[name] if {
	some name, tc in header_cases
	header_reasons(tc.srv, tc.f, tc.h) == tc.want
}

# env_reasons(srv, f) are the secret rules' codes that remove env MCP_ACCESS_TOKEN (a user
# credential) of server 0.
env_reasons(srv, f) := facts_test.reasons(v.drop.env, [0, "MCP_ACCESS_TOKEN"]) if {
	fs := object.union(facts_test.entry_facts("env", [0, "MCP_ACCESS_TOKEN"], {"userCredential"}), f)
	v := secrets.verdict with input as {"request": {"mcpServers": [srv]}, "facts": fs}
}

test_per_user_server_loses_configured_token_env if {
	env_reasons(user_srv, {"credentialed": {0}}) == ["credentials_user"]
}

test_shared_server_keeps_env if {
	env_reasons({"id": "a", "credentials": "shared"}, {"credentialed": {0}}) == []
}

# The facts of env K=v1, EMPTY="" and header K=h1 of server 3 with secretKeys [K, EMPTY,
# MISSING]: OTHER=v2 has no fact and is not listed.
named := facts_test.facts({
	"env": {"secretNamed": {[3, "K"], [3, "EMPTY"]}, "valueEmpty": {[3, "EMPTY"]}},
	"headers": {"secretNamed": {[3, "K"]}},
})

test_secret_keys_name_env_and_headers_both if {
	v := secrets.verdict with input as {"facts": named}
	v.secrets == {"env": {[3, "K"]}, "headers": {[3, "K"]}, "token": set()}
}

test_stored_token_is_always_secret if {
	v := secrets.verdict with input as {"facts": facts_test.facts({"token": {0, 1}})}
	v.secrets.token == {0, 1}
}

test_always_secret_headers if {
	token_header := secrets_of with input as {"facts": facts_test.facts({"headers": {"tokenHeader": {[0, "Authorization"]}}})}
	token_header.headers == set()
	always := secrets_of with input as {"facts": facts_test.facts({"headers": {"alwaysSecret": {[0, "Authorization"]}}})}
	always.headers == {[0, "Authorization"]}
	empty := secrets_of with input as {"facts": facts_test.facts({"headers": {
		"alwaysSecret": {[0, "Authorization"]},
		"valueEmpty": {[0, "Authorization"]},
	}})}
	empty.headers == set()
}

secrets_of := secrets.verdict.secrets
