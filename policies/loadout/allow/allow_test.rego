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
	"reserved id": {"srv": {"id": "servers"}, "facts": {"flags": ["idReserved"]}, "run": no_user, "want": {"id_reserved"}},
	"several flags": {
		"srv": {"id": "u__"}, "facts": {"flags": ["idDoubleUnderscore", "idTrailingUnderscore", "idReserved"]},
		"run": no_user, "want": {"id_double_underscore", "id_trailing_underscore", "id_reserved"},
	},
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
	"plain key": {"e": {"key": "FS_TOKEN", "secretNamed": true}, "want": "keep"},
	"bad key shape": {"e": {"key": "A=B", "keyInvalid": true}, "want": "env_key_invalid"},
	"NUL in value": {"e": {"key": "K", "valueInvalid": true}, "want": "env_value_invalid"},
	"key shape wins over value": {"e": {"key": "1K", "keyInvalid": true, "valueInvalid": true}, "want": "env_key_invalid"},
	"value wins over refused": {"e": {"key": "LD_X", "valueInvalid": true, "keyRefused": true}, "want": "env_value_invalid"},
	"refused key": {"e": {"key": "NODE_OPTIONS", "keyRefused": true}, "want": "env_key_refused"},
	"user credential is not an allowlist rule": {"e": {"key": "T", "userCredential": true}, "want": "keep"},
}

test_env_rules[name] if {
	some name, tc in env_cases
	got := [r | r := allow.env_reason(tc.e)]
	got == [x | x := tc.want; x != "keep"]
}

header_cases := {
	"token name": {"h": {"key": "X-Api-Key", "secretNamed": true}, "want": "keep"},
	"bad name": {"h": {"key": "x key", "nameInvalid": true}, "want": "header_name_invalid"},
	"bad value": {"h": {"key": "x", "valueInvalid": true}, "want": "header_value_invalid"},
	"name wins over value": {"h": {"key": "x y", "nameInvalid": true, "valueInvalid": true}, "want": "header_name_invalid"},
}

test_header_rules[name] if {
	some name, tc in header_cases
	got := [r | r := allow.header_reason(tc.h)]
	got == [x | x := tc.want; x != "keep"]
}

test_tool_rules if {
	allow.tool_reason({"key": "x,Bash", "nameInvalid": true}) == "tool_name_invalid"
	not allow.tool_reason({"key": "read"})
}

test_skills_allowed_by_default if {
	deny := allow.skill_deny with input as {"request": {"skills": [{"name": "review"}]}, "facts": {"skills": [{}]}}
	count(deny) == 0
}

test_denied_skill_names if {
	deny := allow.skill_deny with input as {
		"request": {"skills": [{"name": "ok"}, {"name": "Deploy"}]},
		"facts": {"skills": [{}, {"nameDenied": true}]},
	}
	deny == {1: {"skill_name_denied"}}
}

test_spawn_env_default if {
	allow.spawn_env.prefixes == ["LC_"]
	"PATH" in allow.spawn_env.keys
	"SSH_AUTH_SOCK" in allow.spawn_env.keys
	count(allow.spawn_env.keys) == 11
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
