package loadout_test

import data.loadout

request := {
	"run": {"user": "", "hasUser": false},
	"skills": [{"name": "review"}],
	"mcpServers": [
		{
			"id": "fs", "transport": "stdio", "command": "npx", "credentials": "", "hasUsers": false,
			"env": [{"name": "LD_PRELOAD", "value": "x.so"}, {"name": "FS_TOKEN", "value": "s1"}],
			"headers": [], "allowedTools": ["read", "x,Bash"], "toolsDeclared": true, "secretKeys": ["FS_TOKEN", "LD_PRELOAD"],
		},
		{
			"id": "web", "transport": "http", "url": "http://evil.example/", "credentials": "", "hasUsers": false,
			"env": [], "headers": [{"name": "Authorization", "value": "Bearer s2"}], "allowedTools": [],
			"toolsDeclared": false, "secretKeys": ["Authorization"],
		},
		{
			"id": "docs", "transport": "http", "url": "https://docs.example/", "credentials": "user", "hasUsers": false,
			"env": [], "headers": [{"name": "Authorization", "value": "Bearer s3"}, {"name": "X-Key", "value": "s4"}],
			"allowedTools": ["*"], "toolsDeclared": true, "secretKeys": ["X-Key"],
		},
	],
}

facts := {
	"servers": [
		{
			"env": [
				{"key": "LD_PRELOAD", "keyRefused": true, "secretNamed": true},
				{"key": "FS_TOKEN", "secretNamed": true},
			],
			"tools": [{"key": "x,Bash", "nameInvalid": true}],
			"token": true,
		},
		{
			"url": {"baseMatch": true, "scheme": "http", "baseHost": "evil.example", "urlHost": "evil.example", "schemeLoopback": true},
			"headers": [{"key": "Authorization", "userCredential": true, "tokenHeader": true, "secretNamed": true}],
		},
		{
			"url": {"baseMatch": true, "scheme": "https", "baseHost": "docs.example", "urlHost": "docs.example", "schemeAnywhere": true},
			"headers": [
				{"key": "Authorization", "userCredential": true, "tokenHeader": true},
				{"key": "X-Key", "secretNamed": true},
			],
			"tools": [{"key": "*", "nameInvalid": true}],
			"token": true,
		},
	],
	"skills": [{}],
	"http": [1, 2],
	"credentialed": [2],
}

decision := d if {
	d := loadout.decision with input as {"request": request, "facts": facts}
}

test_servers_aligned_with_request if {
	count(decision.servers) == 3
	decision.servers[0].allow
	not decision.servers[1].allow
	decision.servers[1].reasons == ["url_not_allowed"]
	decision.servers[2].allow
}

test_drops_in_request_order if {
	decision.servers[0].drop == [
		{"field": "env", "key": "LD_PRELOAD", "reason": "env_key_refused"},
		{"field": "allowedTools", "key": "x,Bash", "reason": "tool_name_invalid"},
	]
	decision.servers[2].drop == [
		{"field": "headers", "key": "Authorization", "reason": "credentials_user"},
		{"field": "allowedTools", "key": "*", "reason": "tool_name_invalid"},
	]
}

test_secrets_of_allowed_servers_only_and_not_dropped if {
	decision.secrets == [
		{"server": 0, "field": "env", "key": "FS_TOKEN"},
		{"server": 0, "field": "token", "key": "MCP_ACCESS_TOKEN"},
		{"server": 2, "field": "headers", "key": "X-Key"},
		{"server": 2, "field": "token", "key": "Authorization"},
	]
}

test_restricted_server_left_without_tools_warns if {
	decision.warnings == [{
		"code": "tools_none_left", "server": "docs",
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	}]
}

test_skills_and_spawn_env if {
	decision.skills == [{"allow": true, "reasons": []}]
	decision.spawnEnv.prefixes == ["LC_"]
}

test_empty_request_decides if {
	d := loadout.decision with input as {"request": {"skills": [], "mcpServers": []}, "facts": {"servers": [], "skills": []}}
	d.servers == []
	d.skills == []
	d.secrets == []
	d.warnings == []
}

test_one_reason_per_dropped_key if {
	# MCP_ACCESS_TOKEN is refused by the allowlist and by the per-user rule: one drop, the first.
	srv := {
		"id": "a", "transport": "stdio", "command": "npx", "credentials": "user", "hasUsers": false,
		"env": [{"name": "MCP_ACCESS_TOKEN", "value": "t"}], "headers": [], "allowedTools": [],
		"toolsDeclared": false, "secretKeys": [],
	}
	f := {"env": [{"key": "MCP_ACCESS_TOKEN", "keyRefused": true, "userCredential": true}]}
	d := loadout.decision with input as {
		"request": {"skills": [], "mcpServers": [srv]},
		"facts": {"servers": [f], "skills": [], "credentialed": [0]},
	}
	d.servers[0].drop == [{"field": "env", "key": "MCP_ACCESS_TOKEN", "reason": "env_key_refused"}]
}

test_dropped_secret_is_not_a_secret if {
	# LD_PRELOAD is named in secretKeys but dropped: it is no secret (the value never reaches a plugin).
	not {"server": 0, "field": "env", "key": "LD_PRELOAD"} in decision.secrets
}

test_denied_server_has_no_secrets if {
	every s in decision.secrets {
		s.server != 1
	}
}

test_skill_deny_from_facts if {
	d := loadout.decision with input as {
		"request": {"skills": [{"name": "ok"}, {"name": "deploy"}], "mcpServers": []},
		"facts": {"servers": [], "skills": [{}, {"nameDenied": true}]},
	}
	d.skills == [{"allow": true, "reasons": []}, {"allow": false, "reasons": ["skill_name_denied"]}]
}
