package loadout.facts_test

# none is the facts of a request where no fact holds: every set the policy reads, empty.
none := {
	"flags": {
		"idInvalid": set(), "idDoubleUnderscore": set(), "idTrailingUnderscore": set(), "idReserved": set(),
		"transportInvalid": set(), "commandInvalid": set(), "credentialsUnknown": set(), "urlMissing": set(),
		"urlBadBytes": set(), "urlUserinfo": set(), "urlHostsDisagree": set(), "urlBadPort": set(),
		"urlEmptyHost": set(),
	},
	"url": {"baseMatch": set(), "schemeAnywhere": set(), "schemeLoopback": set(), "loopback": set()},
	"http": set(), "token": set(), "sharedAuthorityOK": set(),
	"credentials": {"user": set(), "shared": set()}, "hasUsers": set(), "userListed": set(),
	"env": {
		"keyInvalid": set(), "keyRefused": set(), "valueInvalid": set(),
		"userCredential": {"": set(), "user": set(), "shared": set()},
		"secretNamed": set(), "valueEmpty": set(),
	},
	"headers": {
		"nameInvalid": set(), "valueInvalid": set(),
		"userCredential": {"": set(), "user": set(), "shared": set()},
		"tokenHeader": {"stdio": set(), "http": set()},
		"secretNamed": set(), "alwaysSecret": set(), "valueEmpty": set(),
	},
	"tools": {"nameInvalid": set(), "noneValid": set()},
	"skills": {"nameDenied": set()},
	"hostEnv": [],
}

# facts(f) is none with the sets of f (nested as in none) in place.
facts(f) := object.union(none, f)

# entry_facts(field, e, names) are facts where each named fact of field holds for entry e.
entry_facts(field, e, names) := facts({field: {name: {e} | some name in names}})

# grouped_facts(field, e, groups) are facts where each grouped fact of field (a key of groups)
# holds for entry e in the group its value names.
grouped_facts(field, e, groups) := facts({field: {name: {group: {e}} | some name, group in groups}})

# reasons(drops, e) are the codes of drops (a list of [code, entries]) that name entry e, in
# order: the first is why e is removed.
reasons(drops, e) := [code |
	some [code, entries] in drops
	e in entries
]

test_none_has_every_fact if {
	count(none.flags) == 13
	count(none.env) == 6
	count(none.headers) == 7
}
