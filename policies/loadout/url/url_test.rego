package loadout.url_test

import data.loadout.facts_test
import data.loadout.url

# deny_of(tc) is the URL deny codes of server 0, an http server with the flags and URL facts
# (names of the facts that hold) of test case tc.
deny_of(tc) := {code |
	some code, servers in facts_test.refused(v, "server")
	0 in servers
} if {
	f := facts_test.facts({
		"http": {0},
		"flags": {flag: {0} | some flag in tc.flags},
		"url": {fact: {0} | some fact in tc.facts},
	})
	v := url.verdict with input as {"facts": f}
}

https_facts := {"baseMatch", "schemeAnywhere"}

http_remote_facts := {"baseMatch", "schemeLoopback"}

http_loopback_facts := {"baseMatch", "loopback", "schemeLoopback"}

cases := {
	"https goes anywhere": {"flags": set(), "facts": https_facts, "want": set()},
	"plain http to a remote host": {"flags": set(), "facts": http_remote_facts, "want": {"url_not_allowed"}},
	"plain http to loopback": {"flags": set(), "facts": http_loopback_facts, "want": set()},
	"scheme outside the base rule": {"flags": set(), "facts": set(), "want": {"url_not_allowed"}},
	"missing url": {"flags": {"urlMissing"}, "facts": set(), "want": {"url_missing"}},
	"bad bytes": {"flags": {"urlBadBytes"}, "facts": https_facts, "want": {"url_bad_bytes"}},
	"userinfo on loopback": {"flags": {"urlUserinfo"}, "facts": http_loopback_facts, "want": {"url_userinfo"}},
	"parsers disagree": {
		"flags": {"urlBadBytes", "urlUserinfo", "urlHostsDisagree"},
		"facts": http_loopback_facts, "want": {"url_bad_bytes", "url_userinfo", "url_parse_mismatch"},
	},
	"bad port": {"flags": {"urlBadPort"}, "facts": https_facts, "want": {"url_bad_port"}},
	"empty host": {"flags": {"urlEmptyHost"}, "facts": {"baseMatch", "schemeLoopback"}, "want": {"url_empty_host", "url_not_allowed"}},
	"flags of other packages are ignored": {"flags": {"idInvalid", "commandInvalid"}, "facts": https_facts, "want": set()},
	"scheme allowed anywhere reaches remote hosts": {
		"flags": set(), "facts": (http_remote_facts | {"schemeAnywhere"}),
		"want": set(),
	},
	"loopback-only scheme needs the base rule": {"flags": set(), "facts": {"loopback", "schemeLoopback", "schemeAnywhere"}, "want": {"url_not_allowed"}},
	"https limited to loopback": {"flags": set(), "facts": {"baseMatch", "schemeLoopback"}, "want": {"url_not_allowed"}},
}

test_url_rules[name] if {
	some name, tc in cases
	deny_of(tc) == tc.want
}

test_stdio_servers_have_no_url_rules if {
	v := url.verdict with input as {"facts": facts_test.facts({"http": {1}, "url": {"baseMatch": {1}, "schemeAnywhere": {1}}})}
	every _, servers in facts_test.refused(v, "server") {
		not 0 in servers
	}
}
