# METADATA
# title: No stdio server that runs a downloader or a shell
# description: docs/POLICIES.md §4.2. The command's base name is a fact Go parses.
package loadout.command_denylist

denied_commands := {"curl", "wget", "sh", "bash", "zsh", "nc"}

deny contains {
	"server": i, "field": "command", "code": "command_denied",
	"msg": sprintf("%s may not run %s", [s.id, s.facts.commandBase]),
} if {
	some i, s in input.servers
	s.transport == "stdio"
	s.facts.commandBase in denied_commands
}

# A shell reached through env or npx is the same shell.
deny contains {
	"server": i, "field": "args", "code": "command_denied",
	"msg": sprintf("%s may not run %s", [s.id, s.args[0]]),
} if {
	some i, s in input.servers
	s.transport == "stdio"
	s.facts.commandBase in {"env", "npx"}
	count(s.args) > 0
	s.args[0] in denied_commands
}
