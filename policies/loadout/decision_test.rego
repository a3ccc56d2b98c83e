package loadout_test

import data.loadout
import data.loadout.facts_test

# Three servers: fs (stdio: LD_PRELOAD refused, x,Bash an invalid tool, a stored token), web
# (http to a remote host over plain http: refused) and docs (per-user https server: its
# Authorization header goes, and its only tool is invalid).
request := {
	"run": {"user": "", "hasUser": false},
	"mcpServers": [
		{"id": "fs", "credentials": "", "hasUsers": false, "users": []},
		{"id": "web", "credentials": "", "hasUsers": false, "users": []},
		{"id": "docs", "credentials": "user", "hasUsers": false, "users": []},
	],
}

facts := facts_test.facts({
	"http": {1, 2},
	"credentialed": {2},
	"restricted": {0, 2},
	"token": {0, 2},
	"url": {"baseMatch": {1, 2}, "schemeLoopback": {1}, "schemeAnywhere": {2}},
	"env": {"keyRefused": {[0, "LD_PRELOAD"]}, "secretNamed": {[0, "LD_PRELOAD"], [0, "FS_TOKEN"]}},
	"headers": {
		"userCredential": {[1, "Authorization"], [2, "Authorization"]},
		"tokenHeader": {[1, "Authorization"], [2, "Authorization"]},
		"secretNamed": {[1, "Authorization"], [2, "X-Key"]},
	},
	"tools": {"nameInvalid": {[0, "x,Bash"], [2, "*"]}, "all": {[0, "read"], [0, "x,Bash"], [2, "*"]}},
})

decision := d if {
	d := loadout.decision with input as {"request": request, "facts": facts}
}

test_deny_names_servers_per_code if {
	decision.servers.url_not_allowed == {1}
	[code | some code, servers in decision.servers; count(servers) > 0] == ["url_not_allowed"]
}

test_drops_in_priority_order if {
	decision.drop.env == [
		["env_key_invalid", set()],
		["env_value_invalid", set()],
		["env_key_refused", {[0, "LD_PRELOAD"]}],
		["credentials_user", set()],
	]
	decision.drop.headers[2] == ["credentials_user", {[2, "Authorization"]}]
	decision.drop.headers[3] == ["replaced_by_token", {[2, "Authorization"]}]
	decision.drop.allowedTools == [["tool_name_invalid", {[0, "x,Bash"], [2, "*"]}]]
}

test_secrets if {
	decision.secrets == {
		"env": {[0, "LD_PRELOAD"], [0, "FS_TOKEN"]},
		"headers": {[1, "Authorization"], [2, "X-Key"]},
		"token": {0, 2},
	}
}

test_restricted_server_left_without_tools_warns if {
	decision.warnings == [{
		"code": "tools_none_left", "server": "docs",
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	}]
}

test_skills_and_spawn_env if {
	decision.skills == {"skill_name_denied": set()}
	decision.spawnEnv.prefixes == ["LC_"]
}

test_empty_request_decides if {
	d := loadout.decision with input as {"request": {"run": {"user": "", "hasUser": false}, "mcpServers": []}, "facts": facts_test.none}
	every _, servers in d.servers {
		servers == set()
	}
	d.secrets == {"env": set(), "headers": set(), "token": set()}
	d.warnings == []
}

test_one_reason_per_dropped_key_comes_first if {
	# MCP_ACCESS_TOKEN is refused by the allowlist and by the per-user rule: the allowlist's
	# reason comes first, so it is the one reported.
	f := facts_test.facts({
		"credentialed": {0},
		"env": {"keyRefused": {[0, "MCP_ACCESS_TOKEN"]}, "userCredential": {[0, "MCP_ACCESS_TOKEN"]}},
	})
	d := loadout.decision with input as {"request": {"mcpServers": [{"id": "a", "credentials": "user"}]}, "facts": f}
	facts_test.reasons(d.drop.env, [0, "MCP_ACCESS_TOKEN"]) == ["env_key_refused", "credentials_user"]
}
