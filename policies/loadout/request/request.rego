# METADATA
# title: What the request itself narrows
# description: |
#   The request's own switches, honoured on every harness: a disabled server, an opt-in
#   server the run's user has not enabled (run.enabled), and a server limited to other
#   harnesses are not rendered; a shared server is rendered with a warning that says whose
#   credential every permitted user's agent gets. host/spec refuses a bad value of any of
#   these fields before the policy runs (a typo never widens access).
package loadout.request

deny contains {"server": i, "field": "disabled", "code": "server_disabled", "msg": "the request disables this server"} if {
	some i, s in input.servers
	s.disabled
}

deny contains {
	"server": i, "field": "availability", "code": "not_enabled",
	"msg": sprintf("an opt-in server the run's user has not enabled (run.enabled[%q])", [s.id]),
} if {
	some i, s in input.servers
	s.availability == "opt-in"
	not input.run.enabled[s.id] == true
}

deny contains {
	"server": i, "field": "harnesses", "code": "harness_not_listed",
	"msg": sprintf("the server is only for %v, not %s", [s.harnesses, input.harness]),
} if {
	some i, s in input.servers
	s.hasHarnesses
	not input.harness in s.harnesses
}

warn contains {
	"server": i, "code": "shared_credential",
	"msg": sprintf("shared server: every permitted user's agent acts with %s's credential", [s.sharedAuthority]),
} if {
	some i, s in input.servers
	s.credentials == "shared"
	s.sharedAuthority != ""
}
