package loadout.per_user_github_test

import data.loadout.per_user_github

http(id, host, credentials) := {"id": id, "transport": "http", "credentials": credentials, "facts": {"url": {"host": host}}}

test_shared_github_is_refused if {
	d := per_user_github.deny with input.servers as [
		http("gh-shared", "github.mcp.corp.example", "shared"),
		http("gh-none", "github.mcp.corp.example", ""),
		http("gh-user", "github.mcp.corp.example", "user"),
		http("docs", "docs.mcp.corp.example", "shared"),
	]
	{x.server | some x in d} == {0, 1}
}
