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
	"servers": [v.server | some v in verdicts],
	"skills": [{"allow": count(r) == 0, "reasons": r} |
		some k, _ in input.request.skills
		r := sort(object.get(allow.skill_deny, k, set()))
	],
	"secrets": [x | some v in verdicts; some x in v.secrets],
	"spawnEnv": allow.spawn_env,
	"warnings": [w | some v in verdicts; some w in v.warnings],
}

# verdicts[i] is the verdict on request server i, computed once per evaluation: its decision
# entry (allow, sorted deny reasons, drops in request order: env, headers, allowedTools), its
# secrets and its warnings. Only the entries the facts list are visited.
verdicts := [verdict(i, srv, input.facts.servers[i]) | some i, srv in input.request.mcpServers]

verdict(i, srv, f) := {
	"server": {"allow": allowed, "reasons": reasons, "drop": drops},
	"secrets": server_secrets,
	"warnings": warnings,
} if {
	reasons := object.get(reasons_of, i, [])
	allowed := count(reasons) == 0
	env_drops := [{"field": "env", "key": e.key, "reason": r} |
		some e in f.env
		r := env_reason(srv, e)
	]
	header_drops := [{"field": "headers", "key": h.key, "reason": r} |
		some h in f.headers
		r := header_reason(srv, f, h)
	]
	tool_drops := [{"field": "allowedTools", "key": t.key, "reason": r} |
		some t in f.tools
		r := allow.tool_reason(t)
	]
	drops := array.concat(array.concat(env_drops, header_drops), tool_drops)
	server_secrets := secrets_if_allowed(allowed, i, srv, f, drops)
	warnings := tool_warnings(allowed, srv, tool_drops)
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

secrets_if_allowed(true, i, srv, f, drops) := secrets.server_secrets(i, srv, f, drops)

secrets_if_allowed(false, _, _, _, _) := []

# A restricted server (allowedTools declared, R10) left with no valid tool keeps none.
tool_warnings(true, srv, tool_drops) := [{
	"code": "tools_none_left",
	"server": srv.id,
	"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
}] if {
	srv.toolsDeclared
	count(srv.allowedTools) == count(tool_drops)
}

default tool_warnings(_, _, _) := []
