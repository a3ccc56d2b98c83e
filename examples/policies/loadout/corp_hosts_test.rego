package loadout.corp_hosts_test

import data.loadout.corp_hosts

# Two http servers as `loadout policy input` prints them (the fields the rule reads).
servers := [
	{"id": "docs", "transport": "http", "url": "https://mcp.corp.example/mcp", "facts": {"url": {"host": "mcp.corp.example"}}},
	{"id": "outside", "transport": "http", "url": "https://mcp.example.com/mcp", "facts": {"url": {"host": "mcp.example.com"}}},
	{"id": "files", "transport": "stdio", "command": "mcp-files", "facts": {"commandBase": "mcp-files"}},
]

test_only_the_outside_host_is_refused if {
	d := corp_hosts.deny with input.servers as servers
	{[x.server, x.code] | some x in d} == {[1, "host_not_allowed"]}
}

# A look-alike domain is not a subdomain.
test_lookalike_is_refused if {
	d := corp_hosts.deny with input.servers as [{"id": "x", "transport": "http", "facts": {"url": {"host": "evilcorp.example"}}}]
	count(d) == 1
}
