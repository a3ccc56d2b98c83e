package loadout.shared_admins_test

import data.loadout.shared_admins

servers := [
	{"id": "ops", "credentials": "shared"},
	{"id": "mine", "credentials": "user"},
	{"id": "plain", "credentials": ""},
]

refused(groups) := {x.server | some x in shared_admins.deny with input as {"run": {"groups": groups}, "servers": servers}}

test_admins_keep_shared_servers if {
	refused(["dev", "admins"]) == set()
}

test_others_lose_shared_servers_only if {
	refused(["dev"]) == {0}
	refused([]) == {0}
}

# A group that only looks like admins is no admin group: names are compared exactly.
test_groups_compare_exactly if {
	refused(["Admins", "admins-readonly", " admins"]) == {0}
}
