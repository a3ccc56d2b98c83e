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
# description: |
#   The decision combines the areas' verdicts: each field lists the parts that decide it, in
#   priority order (host/policy/doc.go). A server or skill is refused by any code of any part;
#   an entry several parts drop is dropped for the first code of the first of them, so the
#   allowlist's reasons rank before the secret rules'.
# entrypoint: true
decision := {
	"servers": [u.servers, a.servers],
	"skills": [a.skills],
	"drop": [a.drop, s.drop],
	"secrets": [s.secrets],
	"spawnEnv": [a.spawnEnv],
	"warnings": a.warnings,
} if {
	u := url.verdict
	a := allow.verdict
	s := secrets.verdict
}
