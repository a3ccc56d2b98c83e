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

# refused(part, verb) maps each code of part's verb statements ("server" or "skill") to the
# indices it refuses.
refused(part, verb) := {code: union({part[j + 2] | some j, w in part; w == verb; part[j + 1] == code}) |
	some i, v in part
	v == verb
	code := part[i + 1]
}

# reasons(part, field, e) are the codes of part's drop statements of field that name entry e,
# in order: the first is why e is removed.
reasons(part, field, e) := [part[i + 2] |
	some i, v in part
	v == "drop"
	part[i + 1] == field
	e in part[i + 3]
]

# secret_set(part, field) is the union of the sets of part's secret statements of field.
secret_set(part, field) := union({part[i + 2] | some i, v in part; v == "secret"; part[i + 1] == field})

# warned(part) are part's warn statements, in order.
warned(part) := [{"code": part[i + 1], "message": part[i + 2], "servers": part[i + 3]} |
	some i, v in part
	v == "warn"
]

# spawn_env(part) are the keys and prefixes of part's spawn_env statements.
spawn_env(part) := {
	"keys": [k | some i, v in part; v == "spawn_env"; some k in part[i + 1]],
	"prefixes": [p | some i, v in part; v == "spawn_env"; some p in part[i + 2]],
}

test_none_has_every_fact if {
	count(none.flags) == 13
	count(none.env) == 6
	count(none.headers) == 7
}
