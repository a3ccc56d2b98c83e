package loadout.allow_test

import data.loadout.allow

# deny_of(srv, f, run) is the allowlist deny set of a one-server request.
deny_of(srv, f, run) := d if {
	full := object.union(base_server, srv)
	credentialed := [0 | some _ in ({x | x := full.credentials != ""; x} | {x | x := full.hasUsers; x})]
	deny := allow.deny with input as {
		"request": {"run": run, "mcpServers": [full]},
		"facts": {"servers": [f], "credentialed": credentialed},
	}
	d := object.get(deny, 0, set())
}

base_server := {
	"id": "fs", "transport": "stdio", "command": "npx", "credentials": "",
	"hasUsers": false, "users": [], "sharedAuthority": "",
}

no_user := {"user": "", "hasUser": false}

alice := {"user": "alice", "hasUser": true}

server_cases := {
	"clean server": {"srv": {}, "facts": {}, "run": no_user, "want": set()},
	"id pattern": {"srv": {"id": "Bad"}, "facts": {"flags": ["idInvalid"]}, "run": no_user, "want": {"id_invalid"}},
	"id double underscore": {
		"srv": {"id": "a__b"}, "facts": {"flags": ["idDoubleUnderscore"]}, "run": no_user,
		"want": {"id_double_underscore"},
	},
	"id trailing underscore": {
		"srv": {"id": "a_"}, "facts": {"flags": ["idTrailingUnderscore"]}, "run": no_user,
		"want": {"id_trailing_underscore"},
	},
	"reserved id": {"srv": {"id": "servers"}, "facts": {}, "run": no_user, "want": {"id_reserved"}},
	"reserved id prefix": {"srv": {"id": "u_alice"}, "facts": {}, "run": no_user, "want": {"id_reserved"}},
	"prefix only at the start": {"srv": {"id": "mu_x"}, "facts": {}, "run": no_user, "want": set()},
	"transport": {
		"srv": {"transport": "sse"}, "facts": {"flags": ["transportInvalid"]}, "run": no_user,
		"want": {"transport_invalid"},
	},
	"command": {"srv": {"command": "-e"}, "facts": {"flags": ["commandInvalid"]}, "run": no_user, "want": {"command_invalid"}},
	"url flags are not allowlist rules": {"srv": {}, "facts": {"flags": ["urlUserinfo"]}, "run": no_user, "want": set()},
	"unknown credentials": {"srv": {"credentials": "admin"}, "facts": {}, "run": alice, "want": {"credentials_invalid"}},
	"per-user server": {"srv": {"credentials": "user"}, "facts": {}, "run": no_user, "want": set()},
	"shared without authority": {
		"srv": {"credentials": "shared"}, "facts": {}, "run": alice,
		"want": {"shared_authority_invalid"},
	},
	"shared with authority": {
		"srv": {"credentials": "shared", "sharedAuthority": "team"}, "facts": {"sharedAuthorityOK": true},
		"run": no_user, "want": set(),
	},
	"users on a non-shared server": {
		"srv": {"hasUsers": true, "users": ["alice"]}, "facts": {}, "run": alice,
		"want": {"users_not_shared"},
	},
	"users without a run user fail closed": {
		"srv": {"credentials": "shared", "sharedAuthority": "team", "hasUsers": true, "users": ["alice"]},
		"facts": {"sharedAuthorityOK": true}, "run": no_user, "want": {"user_missing"},
	},
	"user not in users": {
		"srv": {"credentials": "shared", "sharedAuthority": "team", "hasUsers": true, "users": ["bob"]},
		"facts": {"sharedAuthorityOK": true}, "run": alice, "want": {"user_not_allowed"},
	},
	"empty users admits nobody": {
		"srv": {"credentials": "shared", "sharedAuthority": "team", "hasUsers": true, "users": []},
		"facts": {"sharedAuthorityOK": true}, "run": alice, "want": {"user_not_allowed"},
	},
	"user in users": {
		"srv": {"credentials": "shared", "sharedAuthority": "team", "hasUsers": true, "users": ["bob", "alice"]},
		"facts": {"sharedAuthorityOK": true}, "run": alice, "want": set(),
	},
}

test_server_rules[name] if {
	some name, tc in server_cases
	deny_of(tc.srv, tc.facts, tc.run) == tc.want
}

env_cases := {
	"plain key": {"e": {"upper": "FS_TOKEN", "prefixes": ["FS_"], "suffixes": ["_TOKEN"]}, "want": "keep"},
	"bad key shape": {"e": {"upper": "A=B", "keyInvalid": true}, "want": "env_key_invalid"},
	"NUL in value": {"e": {"upper": "K", "valueInvalid": true}, "want": "env_value_invalid"},
	"key shape wins over value": {"e": {"upper": "1K", "keyInvalid": true, "valueInvalid": true}, "want": "env_key_invalid"},
	"refused key": {"e": {"upper": "NODE_OPTIONS", "prefixes": ["NODE_"], "suffixes": ["_OPTIONS"]}, "want": "env_key_refused"},
	"refused key PATH": {"e": {"upper": "PATH"}, "want": "env_key_refused"},
	"refused prefix": {"e": {"upper": "LD_PRELOAD", "prefixes": ["LD_"], "suffixes": ["_PRELOAD"]}, "want": "env_key_refused"},
	"refused two-part prefix": {
		"e": {"upper": "NPM_CONFIG_REGISTRY", "prefixes": ["NPM_", "NPM_CONFIG_"], "suffixes": ["_CONFIG_REGISTRY", "_REGISTRY"]},
		"want": "env_key_refused",
	},
	"refused suffix": {"e": {"upper": "HTTPS_PROXY", "prefixes": ["HTTPS_"], "suffixes": ["_PROXY"]}, "want": "env_key_refused"},
	"suffix must be at an underscore": {"e": {"upper": "NOPROXY"}, "want": "keep"},
	"the token is refused in a server's env": {
		"e": {"upper": "MCP_ACCESS_TOKEN", "prefixes": ["MCP_", "MCP_ACCESS_"], "suffixes": ["_ACCESS_TOKEN", "_TOKEN"]},
		"want": "env_key_refused",
	},
}

test_env_rules[name] if {
	some name, tc in env_cases
	got := [r | r := allow.env_reason(tc.e)]
	got == [x | x := tc.want; x != "keep"]
}

test_env_kept_when_no_rule_applies if {
	not allow.env_reason({"upper": "LOG_LEVEL", "prefixes": ["LOG_"], "suffixes": ["_LEVEL"]})
}

header_cases := {
	"token name": {"h": {"lower": "x-api-key"}, "want": "keep"},
	"bad name": {"h": {"lower": "x key", "nameInvalid": true}, "want": "header_name_invalid"},
	"bad value": {"h": {"lower": "x", "valueInvalid": true}, "want": "header_value_invalid"},
}

test_header_rules[name] if {
	some name, tc in header_cases
	got := [r | r := allow.header_reason(tc.h)]
	got == [x | x := tc.want; x != "keep"]
}

tool_cases := {
	"plain": {"t": "search", "ok": true},
	"dots dashes underscores": {"t": "a.b-c_d", "ok": true},
	"64 characters": {"t": concat("", [x | some _ in numbers.range(1, 64); x := "a"]), "ok": true},
	"65 characters": {"t": concat("", [x | some _ in numbers.range(1, 65); x := "a"]), "ok": false},
	"comma injects a grant": {"t": "x,Bash", "ok": false},
	"wildcard": {"t": "*", "ok": false},
	"empty": {"t": "", "ok": false},
	"space": {"t": "a b", "ok": false},
}

test_tool_rules[name] if {
	some name, tc in tool_cases
	ok := count([r | r := allow.tool_reason(tc.t)]) == 0
	ok == tc.ok
}

test_skills_allowed_by_default if {
	deny := allow.skill_deny with input as {"request": {"skills": [{"name": "review"}]}}
	count(deny) == 0
}

test_denied_skill_names_are_tunable if {
	deny := allow.skill_deny with input as {"request": {"skills": [{"name": "ok"}, {"name": "Deploy"}]}}
		with data.tunables.allow.skills.denied_names as ["deploy"]
	deny == {1: {"skill_name_denied"}}
}

test_spawn_env_default if {
	allow.spawn_env.prefixes == ["LC_"]
	"PATH" in allow.spawn_env.keys
	"SSH_AUTH_SOCK" in allow.spawn_env.keys
	count(allow.spawn_env.keys) == 11
}

# The prefix and suffix facts are cut at underscores: every tunable must be too.
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
