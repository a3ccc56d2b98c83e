package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"github.com/spf13/cobra"
)

// starterRequest is what `loadout init` writes: a request that renders for every built-in
// harness as it is, with one of each kind of entry, for harness (the first built-in one; none
// named when the binary embeds no plugin). The request parser is strict JSON, so the
// explanation goes to stderr (starterNotes) rather than into comments.
func starterRequest(harness string) string {
	if harness == "" {
		return "{\n" + starterBody
	}
	return "{\n  \"harness\": " + strconv.Quote(harness) + ",\n" + starterBody
}

const starterBody = `  "run": {"ambientAuth": false, "user": "me"},
  "skills": [
    {
      "name": "repo-review",
      "description": "Reviews the repository layout and reports problems. Use when asked to review code structure.",
      "instructions": "# Repository review\n\n1. List the top-level directories and what each holds.\n2. Fill in templates/report.md.\n",
      "resources": [
        {"relPath": "templates/report.md", "content": "# Review\n\n## Layout\n\n## Problems\n"}
      ]
    }
  ],
  "mcpServers": [
    {
      "id": "everything",
      "transport": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"],
      "env": {"EVERYTHING_TOKEN": "replace-me"},
      "secretKeys": ["EVERYTHING_TOKEN"]
    },
    {
      "id": "docs",
      "transport": "http",
      "url": "https://mcp.example.com/mcp",
      "headers": {"Authorization": "Bearer replace-me"},
      "secretKeys": ["Authorization"],
      "allowedTools": ["search"]
    }
  ]
}
`

// starterNotes explains starterRequest, field by field, and says what to run next.
const starterNotes = `What %[1]s holds (the request is strict JSON: no comments, no repeated member,
no misspelt field: one refuses the request, or drops its server or skill):
  harness      the agent CLI to render for; render --harness overrides it
               (built in: %[2]s)
  run          ambientAuth: false keeps the agent in its own isolated config home;
               user: who the run is for (checked against a shared server's users);
               groups: the groups that user belongs to, for rules that grant by group;
               builtinTools: the harness's own tools (Read, Edit, …) the agent may use
               without asking (absent: none, whatever the servers' allowedTools)
  skills       name, description (one line), instructions (the SKILL.md body) and resources
               (files beside SKILL.md, by relative path)
  mcpServers   id, transport stdio (command, args, env) or http (url, headers);
               secretKeys: the env and header keys whose values are secrets — loadout never
               shows them, hands them to a plugin or puts them on a command line;
               allowedTools: the only tools the agent may call (absent: all of them)
  userServers  servers the run's user brings, with the same fields; each id becomes u_<id>,
               and the policy keeps none of them unless its userServers tunable says so
Replace the "replace-me" values, then look at what a render would write:
  loadout render --dry-run --show-content %[1]s
and write it for real:
  loadout render --out out/ %[1]s
docs/request.schema.json describes every field, for editors.
`

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [FILE | -]",
		Short: "Write a starter request (request.json by default) to edit",
		Long: `init writes a starter request: one skill, one stdio server and one http server, which
renders as it is for every built-in harness. It explains each field on stderr. It never
overwrites a file; "-" writes the request to stdout.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "request.json"
			if len(args) == 1 {
				name = args[0]
			}
			if name == "-" {
				_, err := fmt.Fprint(a.stdout, starterRequest(firstHarness()))
				return err
			}
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, fs.ErrExist) {
				return usagef("init: %s already exists; loadout init never overwrites a file (give another name, or - for stdout)", name)
			}
			if err != nil {
				return err
			}
			if _, err := f.WriteString(starterRequest(firstHarness())); err != nil {
				f.Close()
				os.Remove(name)
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "loadout: wrote %s\n", name)
			fmt.Fprintf(a.stderr, starterNotes, name, harnessesText(builtinHarnesses()))
			return nil
		},
	}
}
