package loadout.builtin_tools_test

import data.loadout.builtin_tools

test_the_shell_and_the_network_are_trimmed if {
	d := builtin_tools.drop with input.run.builtinTools as ["Read", "Bash", "Edit", "WebFetch"]
	{x.key | some x in d} == {"Bash", "WebFetch"}
}

test_a_run_without_built_in_tools_drops_nothing if {
	count(builtin_tools.drop) == 0 with input.run.builtinTools as []
}
