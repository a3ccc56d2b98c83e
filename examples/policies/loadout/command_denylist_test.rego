package loadout.command_denylist_test

import data.loadout.command_denylist

stdio(id, command, base, args) := {"id": id, "transport": "stdio", "command": command, "args": args, "facts": {"commandBase": base}}

servers := [
	stdio("fetch", "/usr/bin/curl", "curl", ["https://x"]),
	stdio("files", "mcp-files", "mcp-files", ["."]),
	stdio("wrapped", "/usr/bin/env", "env", ["bash", "-c", "x"]),
	stdio("everything", "npx", "npx", ["-y", "@modelcontextprotocol/server-everything"]),
]

test_denied_commands if {
	d := command_denylist.deny with input.servers as servers
	{[servers[x.server].id, x.field] | some x in d} == {["fetch", "command"], ["wrapped", "args"]}
}
