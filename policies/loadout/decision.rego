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
#   The decision lists the areas' verdicts in priority order (host/policy/doc.go), each a list
#   of statements read in order. A server or skill is refused by any code of any statement;
#   an entry several drop statements name is dropped for the first, so the allowlist's reasons
#   rank before the secret rules'.
# entrypoint: true
decision := [url.verdict, allow.verdict, secrets.verdict]
