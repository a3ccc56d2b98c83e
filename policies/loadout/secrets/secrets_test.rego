package loadout.secrets_test

import data.loadout.facts_test
import data.loadout.secrets

# header_reasons(groups) are the secret rules' codes, first first, that remove header
# "Authorization" of server 0 whose grouped facts are groups (fact: group).
header_reasons(groups) := facts_test.reasons(v, "headers", [0, "Authorization"]) if {
	v := secrets.verdict with input as {"facts": facts_test.grouped_facts("headers", [0, "Authorization"], groups)}
}

header_cases := {
	"per-user server loses Authorization": {"groups": {"userCredential": "user"}, "want": ["credentials_user"]},
	"shared server keeps Authorization": {"groups": {"userCredential": "shared"}, "want": []},
	"server without credentials keeps Authorization": {"groups": {"userCredential": ""}, "want": []},
	"per-user rule before the token rule": {
		"groups": {"userCredential": "user", "tokenHeader": "http"},
		"want": ["credentials_user", "replaced_by_token"],
	},
	"stored token replaces Authorization": {"groups": {"tokenHeader": "http"}, "want": ["replaced_by_token"]},
	"stdio token goes to env, not headers": {"groups": {"tokenHeader": "stdio"}, "want": []},
	"no fact, Authorization kept": {"groups": {}, "want": []},
}

test_header_rules[name] if {
	some name, tc in header_cases
	header_reasons(tc.groups) == tc.want
}

# env_reasons(credentials) are the secret rules' codes that remove env MCP_ACCESS_TOKEN (a user
# credential) of server 0, whose credentials are credentials.
env_reasons(credentials) := facts_test.reasons(v, "env", [0, "MCP_ACCESS_TOKEN"]) if {
	f := facts_test.grouped_facts("env", [0, "MCP_ACCESS_TOKEN"], {"userCredential": credentials})
	v := secrets.verdict with input as {"facts": f}
}

test_per_user_server_loses_configured_token_env if {
	env_reasons("user") == ["credentials_user"]
}

test_shared_server_keeps_env if {
	env_reasons("shared") == []
	env_reasons("") == []
}

# The facts of env K=v1, EMPTY="" and header K=h1 of server 3 with secretKeys [K, EMPTY,
# MISSING]: OTHER=v2 has no fact and is not listed.
named := facts_test.facts({
	"env": {"secretNamed": {[3, "K"], [3, "EMPTY"]}, "valueEmpty": {[3, "EMPTY"]}},
	"headers": {"secretNamed": {[3, "K"]}},
})

test_secret_keys_name_env_and_headers_both if {
	v := secrets.verdict with input as {"facts": named}
	secrets_of(v) == {"env": {[3, "K"]}, "headers": {[3, "K"]}, "token": set()}
}

test_stored_token_is_always_secret if {
	v := secrets.verdict with input as {"facts": facts_test.facts({"token": {0, 1}})}
	secrets_of(v).token == {0, 1}
}

test_always_secret_headers if {
	token_header := secrets_of(secrets.verdict) with input as {"facts": facts_test.grouped_facts("headers", [0, "Authorization"], {"tokenHeader": "http"})}
	token_header.headers == set()
	always := secrets_of(secrets.verdict) with input as {"facts": facts_test.facts({"headers": {"alwaysSecret": {[0, "Authorization"]}}})}
	always.headers == {[0, "Authorization"]}
	empty := secrets_of(secrets.verdict) with input as {"facts": facts_test.facts({"headers": {
		"alwaysSecret": {[0, "Authorization"]},
		"valueEmpty": {[0, "Authorization"]},
	}})}
	empty.headers == set()
}

# secrets_of(part) are the sets of part's secret statements, per field.
secrets_of(part) := {field: facts_test.secret_set(part, field) | some field in ["env", "headers", "token"]}
