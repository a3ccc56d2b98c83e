# METADATA
# title: loadout decision
# description: |
#   The one decision document the host evaluates (data.loadout.decision) over
#   {"request": <spec.Request>, "facts": <facts computed by host/policy>}. It combines the URL,
#   allowlist and secret rules; host/policy/doc.go documents its shape.
package loadout

import data.loadout.allow
import data.loadout.secrets
import data.loadout.url

# METADATA
# entrypoint: true
decision := {
	"servers": [{"allow": count(r) == 0, "reasons": r, "drop": object.get(drops, i, [])} |
		some i, _ in input.facts.servers
		r := object.get(reasons_of, i, [])
	],
	"skills": [{"allow": count(r) == 0, "reasons": r} |
		some k, _ in input.request.skills
		r := sort(object.get(allow.skill_deny, k, set()))
	],
	"secrets": [x |
		some i, f in input.facts.servers
		not reasons_of[i]
		some x in secrets.server_secrets(i, input.request.mcpServers[i], f, object.get(drops, i, []))
	],
	"spawnEnv": allow.spawn_env,
	"warnings": [w |
		some i, srv in input.request.mcpServers
		srv.toolsDeclared
		not reasons_of[i]
		some w in tool_warnings(srv, object.get(drops, i, []))
	],
}

# drops[i] is what server i loses, in request order: env, headers, allowedTools entries, one
# per listed entry a rule removes. Only the entries the facts list are visited.
drops[i] := array.concat(array.concat(env, headers), tools) if {
	some i, f in input.facts.servers
	srv := input.request.mcpServers[i]
	env := [{"field": "env", "key": e.key, "reason": r} |
		some e in f.env
		r := env_reason(srv, e)
	]
	headers := [{"field": "headers", "key": h.key, "reason": r} |
		some h in f.headers
		r := header_reason(srv, f, h)
	]
	tools := [{"field": "allowedTools", "key": t.key, "reason": r} |
		some t in f.tools
		r := allow.tool_reason(t)
	]
}

# deny[i] is every deny code of server i, from the URL and allowlist rules; reasons_of[i] the
# same, sorted. Only denied servers appear: a clean server costs one lookup.
deny[i] contains code if {
	some i, codes in url.deny
	some code in codes
}

deny[i] contains code if {
	some i, codes in allow.deny
	some code in codes
}

reasons_of := {i: sort(codes) | some i, codes in deny}

env_reason(srv, e) := r if {
	r := allow.env_reason(e)
} else := r if {
	r := secrets.env_reason(srv, e)
}

header_reason(srv, f, h) := r if {
	r := allow.header_reason(h)
} else := r if {
	r := secrets.header_reason(srv, f, h)
}

# A restricted server (allowedTools declared, R10) left with no valid tool keeps none.
tool_warnings(srv, drops) := [{
	"code": "tools_none_left",
	"server": srv.id,
	"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
}] if {
	count(srv.allowedTools) == count([d | some d in drops; d.field == "allowedTools"])
}

default tool_warnings(_, _) := []
