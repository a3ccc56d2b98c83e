# METADATA
# title: loadout decision
# description: |
#   The one decision document the host evaluates (data.loadout.decision) over
#   {"request": <the request fields the rules read>, "facts": <facts computed by host/policy>}.
#   It combines the URL, allowlist and secret rules; host/policy/doc.go documents its shape.
package loadout

import data.loadout.allow
import data.loadout.secrets
import data.loadout.url

# METADATA
# entrypoint: true
decision := {
	"servers": object.union(url.deny, allow.deny),
	"skills": allow.skill_deny,
	"drop": {
		"env": array.concat(allowed.env, secret.env),
		"headers": array.concat(allowed.headers, secret.headers),
		"allowedTools": allowed.allowedTools,
	},
	"secrets": secrets.secrets,
	"spawnEnv": allow.spawn_env,
	"warnings": [{
		"code": "tools_none_left",
		"server": input.request.mcpServers[i].id,
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	} |
		some i in none_left
	],
} if {
	allowed := allow.drops
	secret := secrets.drops

	# A restricted server (allowedTools declared, R10) left with no valid tool keeps none.
	dropped_tools := union({ts | some [_, ts] in allowed.allowedTools})
	none_left := input.facts.restricted - {t[0] | some t in (input.facts.tools.all - dropped_tools)}
}
