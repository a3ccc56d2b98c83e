package loadout.builtin_tools

# The built-in tools a run may pre-approve: reading and editing the checkout, never the shell
# or the network.
pre_approvable := {"Read", "Edit", "Write", "NotebookEdit"}

drop contains {
	"field": "builtinTools", "key": t, "code": "builtin_tool_not_pre_approvable",
	"msg": sprintf("%s is asked for, never pre-approved", [t]),
} if {
	some t in input.run.builtinTools
	not t in pre_approvable
}
