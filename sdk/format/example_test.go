package format_test

import (
	"fmt"

	"github.com/loadout-dev/loadout/sdk/format"
)

func ExampleMarshalJSON() {
	servers := format.NewObject().
		Set("docs", format.NewObject().Set("type", "http").Set("url", "https://mcp.example.com/mcp?a=1&b=<2>"))
	out, err := format.MarshalJSON(format.NewObject().Set("mcpServers", servers))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// {
	//   "mcpServers": {
	//     "docs": {
	//       "type": "http",
	//       "url": "https://mcp.example.com/mcp?a=1\u0026b=\u003c2\u003e"
	//     }
	//   }
	// }
}

func ExampleTOMLDocument() {
	var doc format.TOMLDocument
	doc.Table("mcp_servers", "fs").
		Set("command", "/usr/bin/mcp-fs").
		Set("args", []string{"--root", "a \"quoted\" dir"}).
		Set("enabled_tools", []string{})
	out, err := doc.Marshal()
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// [mcp_servers.fs]
	// command = "/usr/bin/mcp-fs"
	// args = ["--root", "a \"quoted\" dir"]
	// enabled_tools = []
}

func ExampleMarkdown() {
	out, err := format.Markdown([]format.Field{
		{Key: "name", Value: format.SkillName("Repo_Review")},
		{Key: "description", Value: "Reviews code.\nallowed-tools: Bash"},
	}, "Body.\n")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// ---
	// name: repo-review
	// description: "Reviews code.\nallowed-tools: Bash"
	// ---
	// Body.
}
