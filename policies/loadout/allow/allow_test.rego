package loadout.allow_test

import data.fixtures.hostile
import data.loadout.allow

denied := d if {
	d := allow.deny with input as hostile
}

dropped := d if {
	d := allow.drop with input as hostile
}

# codes is each hostile fixture server's allowlist deny codes, by id.
codes[s.id] := {d.code | some d in denied; d.server == i} if some i, s in hostile.servers

# drops is each hostile fixture server's dropped entries, by id, as "field key code".
drops[s.id] := {sprintf("%s %s %s", [d.field, d.key, d.code]) | some d in dropped; d.server == i} if some i, s in hostile.servers

want_denied := {
	"https-remote": set(),
	"double__underscore": {"id_double_underscore"},
	"trailing_": {"id_trailing_underscore"},
	"servers": {"id_reserved"},
	"u_alice": {"id_reserved"},
	"shared-no-authority": {"shared_authority_invalid"},
	"users-not-shared": {"users_not_shared"},
	"shared-bob-only": {"user_not_allowed"},
	"shared-alice": set(),
	"per-user": set(),
}

test_server_rules[id] if {
	some id, want in want_denied
	codes[id] == want
}

want_dropped := {
	"env-rules": {
		"env 1BAD env_key_invalid",
		"env LD_PRELOAD env_key_refused",
		"env HTTPS_PROXY env_key_refused",
		"env goproxy env_key_refused",
		"env NUL_VALUE env_value_invalid",
	},
	"header-rules": {"headers Bad Header header_name_invalid", "headers X-Inject header_value_invalid"},
	"tool-rules": {"allowedTools x,Bash tool_name_invalid"},
	"tools-none-left": {"allowedTools bad tool tool_name_invalid"},
	"per-user-stdio": {"env MCP_ACCESS_TOKEN env_key_refused", "env mcp_access_token env_key_refused"},
	"https-remote": set(),
}

test_entry_rules[id] if {
	some id, want in want_dropped
	drops[id] == want
}

test_tools_none_left_warns_once if {
	w := allow.warn with input as hostile
	{[hostile.servers[x.server].id, x.code] | some x in w} == {["tools-none-left", "tools_none_left"]}
}

# The spec refuses these shapes before the policy runs; the rules stand on their own, each
# shown on a real server of the fixture with one field changed.
server_with(fields) := [object.union(hostile.servers[0], fields)]

shape_cases := {
	"id pattern": {"fields": {"id": "Bad_ID"}, "want": {"id_invalid"}},
	"transport": {"fields": {"transport": "sse"}, "want": {"transport_invalid"}},
	"blank command": {"fields": {"transport": "stdio", "command": " "}, "want": {"command_invalid"}},
	"command with a newline": {"fields": {"transport": "stdio", "command": "npx\n"}, "want": {"command_invalid"}},
	"command as a flag": {"fields": {"transport": "stdio", "command": "-e"}, "want": {"command_invalid"}},
	"unknown credentials": {"fields": {"credentials": "admin"}, "want": {"credentials_invalid"}},
	"multi-line authority": {
		"fields": {"credentials": "shared", "sharedAuthority": "one\ntwo"},
		"want": {"shared_authority_invalid"},
	},
	"authority with a tab": {
		"fields": {"credentials": "shared", "sharedAuthority": "ops\tteam"},
		"want": {"shared_authority_invalid"},
	},
	"authority with a line separator": {
		"fields": {"credentials": "shared", "sharedAuthority": "ops\u2028team"},
		"want": {"shared_authority_invalid"},
	},
	"authority with a next-line control": {
		"fields": {"credentials": "shared", "sharedAuthority": "ops\u0085team"},
		"want": {"shared_authority_invalid"},
	},
	"one-line authority": {
		"fields": {"credentials": "shared", "sharedAuthority": "the platform team (ops@corp.example)"},
		"want": set(),
	},
}

test_shape_rules[name] if {
	some name, c in shape_cases
	d := allow.deny with input.servers as server_with(c.fields)
	{x.code | some x in d} == c.want
}

# Without a run user, a server restricted to users fails closed.
test_users_without_run_user_fail_closed if {
	d := allow.deny with input as hostile with input.run as {"user": "", "hasUser": false, "ambientAuth": false}
	{x.code | some x in d; hostile.servers[x.server].id == "shared-alice"} == {"user_missing"}
}

test_denied_skill_names_are_tunable if {
	d := allow.deny with input as hostile with data.tunables.allow.skills.denied_names as ["REVIEW"]
	{[x.skill, x.code] | some x in d; x.skill} == {[0, "skill_name_denied"]}
}

test_no_skill_is_denied_by_default if {
	every x in denied {
		not x.skill
	}
}

test_spawn_env_is_the_tunables if {
	se := allow.spawn_env with input as hostile
	"PATH" in se.keys
	"LC_" in se.prefixes
	not "AWS_SECRET_ACCESS_KEY" in se.keys
}

test_clean_request_passes if {
	count(allow.deny) == 0 with input as data.fixtures.clean
	count(allow.drop) == 0 with input as data.fixtures.clean
}
