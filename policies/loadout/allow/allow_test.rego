package loadout.allow_test

import data.loadout.allow
import data.loadout.facts_test

# deny_of(f, run) is the set of allowlist codes server 0 of a one-server request breaks, with
# the facts f (nested as in facts_test.none) and the run's user run.
deny_of(f, run) := {code |
	some code, servers in facts_test.refused(v, "server")
	0 in servers
} if {
	v := allow.verdict with input as {"request": {"run": run}, "facts": facts_test.facts(f)}
}

no_user := {"user": "", "hasUser": false}

alice := {"user": "alice", "hasUser": true}

shared_ok := {"credentials": {"shared": {0}}, "sharedAuthorityOK": {0}}

server_cases := {
	"clean server": {"facts": {}, "run": no_user, "want": set()},
	"id pattern": {"facts": {"flags": {"idInvalid": {0}}}, "run": no_user, "want": {"id_invalid"}},
	"id double underscore": {"facts": {"flags": {"idDoubleUnderscore": {0}}}, "run": no_user, "want": {"id_double_underscore"}},
	"id trailing underscore": {"facts": {"flags": {"idTrailingUnderscore": {0}}}, "run": no_user, "want": {"id_trailing_underscore"}},
	"reserved id": {"facts": {"flags": {"idReserved": {0}}}, "run": no_user, "want": {"id_reserved"}},
	"several flags": {
		"facts": {"flags": {"idDoubleUnderscore": {0}, "idTrailingUnderscore": {0}, "idReserved": {0}}},
		"run": no_user, "want": {"id_double_underscore", "id_trailing_underscore", "id_reserved"},
	},
	"flags of another server": {"facts": {"flags": {"idInvalid": {1}}}, "run": no_user, "want": set()},
	"transport": {"facts": {"flags": {"transportInvalid": {0}}}, "run": no_user, "want": {"transport_invalid"}},
	"command": {"facts": {"flags": {"commandInvalid": {0}}}, "run": no_user, "want": {"command_invalid"}},
	"url flags are not allowlist rules": {"facts": {"flags": {"urlUserinfo": {0}}}, "run": no_user, "want": set()},
	"unknown credentials": {"facts": {"flags": {"credentialsUnknown": {0}}}, "run": alice, "want": {"credentials_invalid"}},
	"per-user server": {"facts": {"credentials": {"user": {0}}}, "run": no_user, "want": set()},
	"shared without authority": {"facts": {"credentials": {"shared": {0}}}, "run": alice, "want": {"shared_authority_invalid"}},
	"shared with authority": {"facts": shared_ok, "run": no_user, "want": set()},
	"users on a server without credentials": {"facts": {"hasUsers": {0}}, "run": alice, "want": {"users_not_shared"}},
	"users on a per-user server": {
		"facts": {"credentials": {"user": {0}}, "hasUsers": {0}}, "run": alice,
		"want": {"users_not_shared"},
	},
	"users without a run user fail closed": {
		"facts": object.union(shared_ok, {"hasUsers": {0}}), "run": no_user,
		"want": {"user_missing"},
	},
	"user not in users": {"facts": object.union(shared_ok, {"hasUsers": {0}}), "run": alice, "want": {"user_not_allowed"}},
	"user in users": {
		"facts": object.union(shared_ok, {"hasUsers": {0}, "userListed": {0}}), "run": alice,
		"want": set(),
	},
	"another server lists the user": {
		"facts": object.union(shared_ok, {"hasUsers": {0}, "userListed": {1}}), "run": alice,
		"want": {"user_not_allowed"},
	},
	"shared without users admits every user": {"facts": shared_ok, "run": alice, "want": set()},
}

test_server_rules[name] if {
	some name, tc in server_cases
	deny_of(tc.facts, tc.run) == tc.want
}

# A run user that is not a boolean decides nothing: the request is refused (no decision).
test_run_user_not_a_boolean_decides_nothing if {
	not allow.verdict with input as {"request": {"run": {"user": "alice", "hasUser": "yes"}}, "facts": facts_test.none}
}

# drop_reasons(field, names) are the allowlist codes, first first, that remove an entry of
# field whose facts are names.
drop_reasons(field, names) := facts_test.reasons(v, field, [0, "K"]) if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.entry_facts(field, [0, "K"], names)}
}

no_request := {"run": no_user}

env_cases := {
	"plain key": {"facts": {"secretNamed"}, "want": []},
	"bad key shape": {"facts": {"keyInvalid"}, "want": ["env_key_invalid"]},
	"NUL in value": {"facts": {"valueInvalid"}, "want": ["env_value_invalid"]},
	"key shape wins over value": {"facts": {"keyInvalid", "valueInvalid"}, "want": ["env_key_invalid", "env_value_invalid"]},
	"value wins over refused": {"facts": {"valueInvalid", "keyRefused"}, "want": ["env_value_invalid", "env_key_refused"]},
	"refused key": {"facts": {"keyRefused"}, "want": ["env_key_refused"]},
}

test_env_rules[name] if {
	some name, tc in env_cases
	drop_reasons("env", tc.facts) == tc.want
}

test_user_credential_is_not_an_allowlist_rule if {
	f := facts_test.grouped_facts("env", [0, "MCP_ACCESS_TOKEN"], {"userCredential": "user"})
	v := allow.verdict with input as {"request": no_request, "facts": f}
	facts_test.reasons(v, "env", [0, "MCP_ACCESS_TOKEN"]) == []
}

header_cases := {
	"token name": {"facts": {"secretNamed"}, "want": []},
	"bad name": {"facts": {"nameInvalid"}, "want": ["header_name_invalid"]},
	"bad value": {"facts": {"valueInvalid"}, "want": ["header_value_invalid"]},
	"name wins over value": {"facts": {"nameInvalid", "valueInvalid"}, "want": ["header_name_invalid", "header_value_invalid"]},
}

test_header_rules[name] if {
	some name, tc in header_cases
	drop_reasons("headers", tc.facts) == tc.want
}

test_tool_rules if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.entry_facts("tools", [0, "x,Bash"], {"nameInvalid"})}
	facts_test.reasons(v, "allowedTools", [0, "x,Bash"]) == ["tool_name_invalid"]
	clean := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	facts_test.reasons(clean, "allowedTools", [0, "read"]) == []
}

test_skills_allowed_by_default if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	facts_test.refused(v, "skill") == {"skill_name_denied": set()}
}

test_denied_skill_names if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.facts({"skills": {"nameDenied": {1}}})}
	facts_test.refused(v, "skill") == {"skill_name_denied": {1}}
}

test_spawn_env_default if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	spawn := facts_test.spawn_env(v)
	spawn.prefixes == ["LC_"]
	"PATH" in spawn.keys
	"SSH_AUTH_SOCK" in spawn.keys
	count(spawn.keys) == 11
}

test_restricted_servers_left_without_tools_warn if {
	f := facts_test.facts({"tools": {"nameInvalid": {[0, "*"], [1, "x,Bash"]}, "noneValid": {0, 2}}})
	v := allow.verdict with input as {"request": no_request, "facts": f}
	facts_test.warned(v) == [{
		"code": "tools_none_left", "servers": {0, 2},
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	}]
}

test_no_warning_names_a_server_that_keeps_tools if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	[w | some w in facts_test.warned(v); count(w.servers) > 0] == []
}

# Credential modes other than "" come from the tunables; the rules give user and shared their
# meaning, so both must stay valid.
test_credential_modes_tunable if {
	{"user", "shared"} == {m | some m in data.tunables.allow.credentials.modes}
}

# Refused prefixes are matched at the underscores of a key: every prefix tunable must end with
# one (host/policy refuses to start otherwise). A suffix matches anywhere, so PROXY refuses
# GOPROXY as well as HTTPS_PROXY.
test_refused_prefixes_are_cut_at_underscores if {
	every p in data.tunables.allow.env_refused.prefixes {
		endswith(p, "_")
	}
	every s in data.tunables.allow.env_refused.suffixes {
		s != ""
	}
	"PROXY" in data.tunables.allow.env_refused.suffixes
}

test_refused_keys_are_uppercase if {
	every k in data.tunables.allow.env_refused.keys {
		k == upper(k)
	}
}

test_default_tool_pattern if {
	regex.match(data.tunables.allow.tools.pattern, "a.b-c_d")
	not regex.match(data.tunables.allow.tools.pattern, "x,Bash")
	not regex.match(data.tunables.allow.tools.pattern, "*")
}

# Every credential mode the rules name is a key of facts.credentials (host/policy gives one per
# mode of the tunables): without it the verdict is undefined and the request refused.
test_missing_credential_group_decides_nothing if {
	not allow.verdict with input as {"request": {"run": no_user}, "facts": object.remove(facts_test.none, ["credentials"])}
	not allow.verdict with input as {"request": {"run": no_user}, "facts": json.patch(facts_test.none, [{"op": "remove", "path": "/credentials/shared"}])}
}
