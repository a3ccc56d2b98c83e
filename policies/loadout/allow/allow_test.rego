package loadout.allow_test

import data.loadout.allow
import data.loadout.facts_test

# deny_of(srv, f, run) is the set of allowlist codes server 0 of a one-server request breaks.
deny_of(srv, f, run) := {code |
	some code, servers in v.servers
	0 in servers
} if {
	full := object.union(base_server, srv)
	credentialed := {0 | full.credentials != ""} | {0 | full.hasUsers}
	v := allow.verdict with input as {
		"request": {"run": run, "mcpServers": [full]},
		"facts": facts_test.facts(object.union({"credentialed": credentialed}, f)),
	}
}

base_server := {"id": "fs", "credentials": "", "hasUsers": false, "users": []}

no_user := {"user": "", "hasUser": false}

alice := {"user": "alice", "hasUser": true}

server_cases := {
	"clean server": {"srv": {}, "facts": {}, "run": no_user, "want": set()},
	"id pattern": {"srv": {"id": "Bad"}, "facts": {"flags": {"idInvalid": {0}}}, "run": no_user, "want": {"id_invalid"}},
	"id double underscore": {
		"srv": {"id": "a__b"}, "facts": {"flags": {"idDoubleUnderscore": {0}}}, "run": no_user,
		"want": {"id_double_underscore"},
	},
	"id trailing underscore": {
		"srv": {"id": "a_"}, "facts": {"flags": {"idTrailingUnderscore": {0}}}, "run": no_user,
		"want": {"id_trailing_underscore"},
	},
	"reserved id": {"srv": {"id": "servers"}, "facts": {"flags": {"idReserved": {0}}}, "run": no_user, "want": {"id_reserved"}},
	"several flags": {
		"srv": {"id": "u__"},
		"facts": {"flags": {"idDoubleUnderscore": {0}, "idTrailingUnderscore": {0}, "idReserved": {0}}},
		"run": no_user, "want": {"id_double_underscore", "id_trailing_underscore", "id_reserved"},
	},
	"flags of another server": {"srv": {}, "facts": {"flags": {"idInvalid": {1}}}, "run": no_user, "want": set()},
	"transport": {"srv": {}, "facts": {"flags": {"transportInvalid": {0}}}, "run": no_user, "want": {"transport_invalid"}},
	"command": {"srv": {}, "facts": {"flags": {"commandInvalid": {0}}}, "run": no_user, "want": {"command_invalid"}},
	"url flags are not allowlist rules": {"srv": {}, "facts": {"flags": {"urlUserinfo": {0}}}, "run": no_user, "want": set()},
	"unknown credentials": {"srv": {"credentials": "admin"}, "facts": {}, "run": alice, "want": {"credentials_invalid"}},
	"per-user server": {"srv": {"credentials": "user"}, "facts": {}, "run": no_user, "want": set()},
	"shared without authority": {
		"srv": {"credentials": "shared"}, "facts": {}, "run": alice,
		"want": {"shared_authority_invalid"},
	},
	"shared with authority": {
		"srv": {"credentials": "shared"}, "facts": {"sharedAuthorityOK": {0}},
		"run": no_user, "want": set(),
	},
	"users on a non-shared server": {
		"srv": {"hasUsers": true, "users": ["alice"]}, "facts": {}, "run": alice,
		"want": {"users_not_shared"},
	},
	"users without a run user fail closed": {
		"srv": {"credentials": "shared", "hasUsers": true, "users": ["alice"]},
		"facts": {"sharedAuthorityOK": {0}}, "run": no_user, "want": {"user_missing"},
	},
	"user not in users": {
		"srv": {"credentials": "shared", "hasUsers": true, "users": ["bob"]},
		"facts": {"sharedAuthorityOK": {0}}, "run": alice, "want": {"user_not_allowed"},
	},
	"empty users admits nobody": {
		"srv": {"credentials": "shared", "hasUsers": true, "users": []},
		"facts": {"sharedAuthorityOK": {0}}, "run": alice, "want": {"user_not_allowed"},
	},
	"user in users": {
		"srv": {"credentials": "shared", "hasUsers": true, "users": ["bob", "alice"]},
		"facts": {"sharedAuthorityOK": {0}}, "run": alice, "want": set(),
	},
}

test_server_rules[name] if {
	some name, tc in server_cases
	deny_of(tc.srv, tc.facts, tc.run) == tc.want
}

# drop_reasons(field, names) are the allowlist codes, first first, that remove an entry of
# field whose facts are names.
drop_reasons(field, names) := facts_test.reasons(v.drop[field], [0, "K"]) if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.entry_facts(field, [0, "K"], names)}
}

no_request := {"run": no_user, "mcpServers": []}

env_cases := {
	"plain key": {"facts": {"secretNamed"}, "want": []},
	"bad key shape": {"facts": {"keyInvalid"}, "want": ["env_key_invalid"]},
	"NUL in value": {"facts": {"valueInvalid"}, "want": ["env_value_invalid"]},
	"key shape wins over value": {"facts": {"keyInvalid", "valueInvalid"}, "want": ["env_key_invalid", "env_value_invalid"]},
	"value wins over refused": {"facts": {"valueInvalid", "keyRefused"}, "want": ["env_value_invalid", "env_key_refused"]},
	"refused key": {"facts": {"keyRefused"}, "want": ["env_key_refused"]},
	"user credential is not an allowlist rule": {"facts": {"userCredential"}, "want": []},
}

test_env_rules[name] if {
	some name, tc in env_cases
	drop_reasons("env", tc.facts) == tc.want
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
	facts_test.reasons(v.drop.allowedTools, [0, "x,Bash"]) == ["tool_name_invalid"]
	clean := allow.verdict with input as {"request": no_request, "facts": facts_test.facts({"tools": {"all": {[0, "read"]}}})}
	facts_test.reasons(clean.drop.allowedTools, [0, "read"]) == []
}

test_skills_allowed_by_default if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	v.skills == {"skill_name_denied": set()}
}

test_denied_skill_names if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.facts({"skills": {"nameDenied": {1}}})}
	v.skills == {"skill_name_denied": {1}}
}

test_spawn_env_default if {
	v := allow.verdict with input as {"request": no_request, "facts": facts_test.none}
	v.spawnEnv.prefixes == ["LC_"]
	"PATH" in v.spawnEnv.keys
	"SSH_AUTH_SOCK" in v.spawnEnv.keys
	count(v.spawnEnv.keys) == 11
}

test_restricted_server_left_without_tools_warns if {
	f := facts_test.facts({"restricted": {0, 1}, "tools": {
		"nameInvalid": {[0, "*"], [1, "x,Bash"]},
		"all": {[0, "*"], [1, "x,Bash"], [1, "read"]},
	}})
	v := allow.verdict with input as {"request": {"run": no_user, "mcpServers": [{"id": "docs"}, {"id": "fs"}]}, "facts": f}
	v.warnings == [{
		"code": "tools_none_left", "server": 0,
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	}]
}

test_restricted_server_without_tools_warns if {
	f := facts_test.facts({"restricted": {0}})
	v := allow.verdict with input as {"request": {"run": no_user, "mcpServers": [{"id": "none"}]}, "facts": f}
	[w.server | some w in v.warnings] == [0]
}

# Refused prefixes and suffixes are matched at the underscores of a key: every tunable must
# end (start) with one (host/policy refuses to start otherwise).
test_refused_prefixes_and_suffixes_are_cut_at_underscores if {
	every p in data.tunables.allow.env_refused.prefixes {
		endswith(p, "_")
	}
	every s in data.tunables.allow.env_refused.suffixes {
		startswith(s, "_")
	}
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
