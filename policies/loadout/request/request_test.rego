package loadout.request_test

import data.fixtures.hostile
import data.loadout.request

server(fields) := object.union(hostile.servers[0], fields)

alice := {"user": "alice", "hasUser": true, "ambientAuth": false, "enabled": {}}

cases := {
	"plain server": {"fields": {}, "run": alice, "want": set()},
	"disabled": {"fields": {"disabled": true}, "run": alice, "want": {"server_disabled"}},
	"opt-in not enabled": {"fields": {"availability": "opt-in"}, "run": alice, "want": {"not_enabled"}},
	"opt-in disabled by the user": {
		"fields": {"availability": "opt-in"},
		"run": object.union(alice, {"enabled": {"https-remote": false}}), "want": {"not_enabled"},
	},
	"opt-in enabled": {
		"fields": {"availability": "opt-in"},
		"run": object.union(alice, {"enabled": {"https-remote": true}}), "want": set(),
	},
	"another harness": {"fields": {"hasHarnesses": true, "harnesses": ["codex"]}, "run": alice, "want": {"harness_not_listed"}},
	"this harness": {"fields": {"hasHarnesses": true, "harnesses": ["codex", "claude"]}, "run": alice, "want": set()},
}

test_request_switches[name] if {
	some name, c in cases
	d := request.deny with input as object.union(hostile, {"servers": [server(c.fields)], "run": c.run})
	{x.code | some x in d} == c.want
}

test_shared_servers_are_named if {
	w := request.warn with input as hostile
	{hostile.servers[x.server].id | some x in w} == {"shared-bob-only", "shared-alice"}
}
