# METADATA
# title: Remote servers only on the corporate domain
# description: docs/POLICIES.md §4.1. Copy into a team policy directory; loadout lays it over the defaults.
package loadout.corp_hosts

deny contains {
	"server": i, "field": "url", "code": "host_not_allowed",
	"msg": sprintf("%s: host %s is not on the corporate list", [s.id, s.facts.url.host]),
} if {
	some i, s in input.servers
	s.transport == "http"
	not endswith(s.facts.url.host, ".corp.example")
}
