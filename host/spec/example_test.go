package spec_test

import (
	"errors"
	"fmt"

	"github.com/loadout-dev/loadout/host/spec"
)

func ExampleParse() {
	body := []byte(`{
	  "skills": [{"name": "../../etc/Review", "instructions": "Review the diff.",
	              "resources": [{"relPath": "./notes.md", "content": "x"}, {"relPath": "../x", "content": "y"}]}],
	  "mcpServers": [{"id": "gh", "command": "npx", "args": ["-y", 1]}, {"id": "web", "transport": "sse"}]
	}`)
	req, diags, err := spec.Parse(body)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	for _, sk := range req.Skills {
		fmt.Println("skill", sk.Name, len(sk.Resources), "resource(s)")
	}
	for _, s := range req.Servers {
		fmt.Println("server", s.ID, s.Transport, s.Command, s.Args)
	}
	for _, d := range diags {
		fmt.Println(d.Field, d.Code)
	}

	_, _, err = spec.Parse([]byte(`{"mcpServers":[{"id":"a","command":"safe","Command":"evil"}]}`))
	var re *spec.RejectError
	if errors.As(err, &re) {
		fmt.Println("refused:", re.Field, re.Code)
	}
	// Output:
	// skill Review 1 resource(s)
	// server gh stdio npx [-y]
	// skills[0].name name_changed
	// skills[0].resources[0].relPath path_changed
	// skills[0].resources[1].relPath path_traversal
	// mcpServers[0].args[1] non_string_entry
	// mcpServers[1].transport invalid_transport
	// refused: mcpServers[0].Command folded_member
}
