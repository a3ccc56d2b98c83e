package loadout_test

import data.loadout
import data.loadout.facts_test

# Three servers: fs (stdio: LD_PRELOAD refused, x,Bash an invalid tool, a stored token), web
# (http to a remote host over plain http: refused) and docs (per-user https server: its
# Authorization header goes, and its only tool is invalid).
request := {"run": {"user": "", "hasUser": false}}

facts := facts_test.facts({
	"http": {1, 2},
	"credentials": {"user": {2}},
	"token": {0, 2},
	"url": {"baseMatch": {1, 2}, "schemeLoopback": {1}, "schemeAnywhere": {2}},
	"env": {"keyRefused": {[0, "LD_PRELOAD"]}, "secretNamed": {[0, "LD_PRELOAD"], [0, "FS_TOKEN"]}},
	"headers": {
		"userCredential": {"": {[1, "Authorization"]}, "user": {[2, "Authorization"]}},
		"tokenHeader": {"http": {[2, "Authorization"]}},
		"secretNamed": {[1, "Authorization"], [2, "X-Key"]},
	},
	"tools": {"nameInvalid": {[0, "x,Bash"], [2, "*"]}, "noneValid": {2}},
})

decision := d if {
	d := loadout.decision with input as {"request": request, "facts": facts}
}

# refused(d) are the deny codes of decision d that name a server, with the servers.
refused(d) := {code: servers |
	some part in d
	some code, servers in facts_test.refused(part, "server")
	count(servers) > 0
}

# merged(d, field) is the union of the parts' secret sets of field.
merged(d, field) := union({facts_test.secret_set(part, field) | some part in d})

# drop_reasons(d, field, e) are the codes that drop entry e of field, first first.
drop_reasons(d, field, e) := [code |
	some part in d
	some code in facts_test.reasons(part, field, e)
]

# warned(d) are the warn statements of d's parts, in order.
warned(d) := [w | some part in d; some w in facts_test.warned(part)]

test_parts_in_priority_order if {
	count(decision) == 3
	refused([decision[0]]) == {"url_not_allowed": {1}}
	facts_test.secret_set(decision[2], "token") == {0, 2}
}

test_refused_servers_per_code if {
	refused(decision) == {"url_not_allowed": {1}}
}

test_drops if {
	drop_reasons(decision, "env", [0, "LD_PRELOAD"]) == ["env_key_refused"]
	drop_reasons(decision, "env", [0, "FS_TOKEN"]) == []
	drop_reasons(decision, "headers", [2, "Authorization"]) == ["credentials_user", "replaced_by_token"]
	drop_reasons(decision, "headers", [1, "Authorization"]) == []
	drop_reasons(decision, "allowedTools", [0, "x,Bash"]) == ["tool_name_invalid"]
	drop_reasons(decision, "allowedTools", [2, "*"]) == ["tool_name_invalid"]
}

test_secrets if {
	merged(decision, "env") == {[0, "LD_PRELOAD"], [0, "FS_TOKEN"]}
	merged(decision, "headers") == {[1, "Authorization"], [2, "X-Key"]}
	merged(decision, "token") == {0, 2}
}

test_restricted_server_left_without_tools_warns if {
	warned(decision) == [{
		"code": "tools_none_left", "servers": {2},
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	}]
}

test_skills_and_spawn_env if {
	[code | some part in decision; some code, skills in facts_test.refused(part, "skill"); count(skills) > 0] == []
	[p | some part in decision; some p in facts_test.spawn_env(part).prefixes] == ["LC_"]
}

test_empty_request_decides if {
	d := loadout.decision with input as {"request": request, "facts": facts_test.none}
	refused(d) == {}
	merged(d, "env") == set()
	[w | some w in warned(d); count(w.servers) > 0] == []
}

test_allowlist_reason_comes_before_the_secret_rules if {
	# MCP_ACCESS_TOKEN is refused by the allowlist and by the per-user rule: the allowlist's
	# verdict comes first, so its reason is the one reported.
	f := facts_test.facts({
		"credentials": {"user": {0}},
		"env": {"keyRefused": {[0, "MCP_ACCESS_TOKEN"]}, "userCredential": {"user": {[0, "MCP_ACCESS_TOKEN"]}}},
	})
	d := loadout.decision with input as {"request": request, "facts": f}
	drop_reasons(d, "env", [0, "MCP_ACCESS_TOKEN"]) == ["env_key_refused", "credentials_user"]
}
