package loadout.url_test

import data.loadout.url

# deny_of(tc) is the URL deny set of a one-server request built from test case tc.
deny_of(tc) := d if {
	deny := url.deny with input as {
		"request": {"mcpServers": [{"id": "s", "transport": "http", "url": tc.url}]},
		"facts": {"servers": [{"flags": tc.flags, "url": tc.facts}], "http": [0]},
	}
	d := object.get(deny, 0, set())
}

https_facts := {"baseMatch": true, "scheme": "https", "baseHost": "mcp.example.com", "urlHost": "mcp.example.com", "schemeAnywhere": true}

http_remote_facts := {"baseMatch": true, "scheme": "http", "baseHost": "mcp.example.com", "urlHost": "mcp.example.com", "schemeLoopback": true}

http_loopback_facts := {
	"baseMatch": true, "scheme": "http", "baseHost": "127.0.0.1", "urlHost": "127.0.0.1",
	"loopback": true, "schemeLoopback": true,
}

cases := {
	"https goes anywhere": {"url": "https://mcp.example.com/", "flags": [], "facts": https_facts, "want": set()},
	"plain http to a remote host": {"url": "http://mcp.example.com/", "flags": [], "facts": http_remote_facts, "want": {"url_not_allowed"}},
	"plain http to loopback": {"url": "http://127.0.0.1/", "flags": [], "facts": http_loopback_facts, "want": set()},
	"scheme outside the base rule": {
		"url": "ftp://127.0.0.1/", "flags": [],
		"facts": {"scheme": "ftp", "baseHost": "", "urlHost": "127.0.0.1", "loopback": false},
		"want": {"url_not_allowed"},
	},
	"missing url": {"url": "", "flags": ["urlMissing"], "facts": {}, "want": {"url_missing"}},
	"bad bytes": {"url": "https://a b/", "flags": ["urlBadBytes"], "facts": https_facts, "want": {"url_bad_bytes"}},
	"userinfo on loopback": {
		"url": "http://u@127.0.0.1/", "flags": ["urlUserinfo"], "facts": http_loopback_facts,
		"want": {"url_userinfo"},
	},
	"parsers disagree": {
		"url": "http://evil.example\\@127.0.0.1/", "flags": ["urlBadBytes", "urlUserinfo", "urlHostsDisagree"],
		"facts": http_loopback_facts, "want": {"url_bad_bytes", "url_userinfo", "url_parse_mismatch"},
	},
	"bad port": {"url": "https://h:0/", "flags": ["urlBadPort"], "facts": https_facts, "want": {"url_bad_port"}},
	"empty host": {
		"url": "http:///x", "flags": ["urlEmptyHost"],
		"facts": {"baseMatch": true, "scheme": "http", "schemeLoopback": true}, "want": {"url_empty_host", "url_not_allowed"},
	},
	"flags of other packages are ignored": {
		"url": "https://mcp.example.com/", "flags": ["idInvalid", "commandInvalid"],
		"facts": https_facts, "want": set(),
	},
}

test_url_rules[name] if {
	some name, tc in cases
	deny_of(tc) == tc.want
}

test_stdio_servers_have_no_url_rules if {
	deny := url.deny with input as {
		"request": {"mcpServers": [{"id": "s", "transport": "stdio", "url": "http://evil.example/"}]},
		"facts": {"servers": [{}]},
	}
	count(deny) == 0
}

test_scheme_allowed_anywhere_reaches_remote_hosts if {
	got := deny_of({"url": "http://mcp.example.com/", "flags": [], "facts": object.union(http_remote_facts, {"schemeAnywhere": true})})
	got == set()
}

test_loopback_only_scheme_needs_the_base_rule if {
	f := {"scheme": "http", "loopback": true, "schemeLoopback": true, "schemeAnywhere": true}
	deny_of({"url": "http://127.0.0.1/", "flags": [], "facts": f}) == {"url_not_allowed"}
}

test_https_limited_to_loopback if {
	f := {"baseMatch": true, "scheme": "https", "baseHost": "mcp.example.com", "urlHost": "mcp.example.com", "schemeLoopback": true}
	deny_of({"url": "https://mcp.example.com/", "flags": [], "facts": f}) == {"url_not_allowed"}
}
