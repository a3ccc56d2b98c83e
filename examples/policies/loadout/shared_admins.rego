# METADATA
# title: Shared-credential servers for admins only
# description: |
#   docs/POLICIES.md §4.4. A shared-credential server acts with one credential for every run
#   that uses it: only a run whose user is in one of admin_groups (run.groups, as the platform
#   that launches the run says) may have one. A run without groups has none.
package loadout.shared_admins

admin_groups := {"admins"}

deny contains {
	"server": i, "field": "credentials", "code": "shared_admins_only",
	"msg": sprintf("%s uses a shared credential: only members of %s may use it", [s.id, concat(", ", sort(admin_groups))]),
} if {
	some i, s in input.servers
	s.credentials == "shared"
	not admin
}

admin if {
	some g in input.run.groups
	g in admin_groups
}
