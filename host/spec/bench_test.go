package spec_test

import (
	"testing"

	"github.com/loadout-dev/loadout/host/spec"
)

// benchRequest is a realistic request: three skills with a few resources, four servers of both
// transports with env, headers, tool lists and optional fields, a run and tokens.
const benchRequest = `{
  "harness": "claude",
  "run": {"ambientAuth": false, "user": "alice"},
  "tokens": {"github": "ghs_0123456789abcdef", "docs": "tok-docs-1"},
  "skills": [
    {"name": "repo-review", "description": "Reviews a pull request against the team's checklist.\nUse before merging.",
     "instructions": "Read the diff. Check tests, naming, error handling and docs. Report findings as a list, most severe first. Do not approve changes that lower coverage.",
     "resources": [
       {"relPath": "templates/report.md", "content": "# Review\n\n## Findings\n\n- ...\n"},
       {"relPath": "checklists/go.md", "content": "- errors wrapped with %w\n- no panics across boundaries\n- table-driven tests\n"},
       {"relPath": "checklists\\rego.md", "content": "- default deny\n- tests next to the policy\n"}
     ]},
    {"name": "release-notes", "description": "Drafts release notes from merged pull requests.",
     "instructions": "List merged pull requests since the last tag, group them by area and write one line each.",
     "resources": [{"relPath": "scripts/collect.sh", "content": "#!/bin/sh\ngit log --merges --oneline \"$1\"..HEAD\n"}]},
    {"name": "../../evil/deploy", "instructions": "Deploy to staging only.", "description": "Deploys."}
  ],
  "mcpServers": [
    {"id": "github", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
     "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz012345", "LOG_LEVEL": "warn"},
     "secretKeys": ["GITHUB_PERSONAL_ACCESS_TOKEN"], "allowedTools": ["get_issue", "list_pull_requests", "create_review"],
     "timeout": 60, "exposure": "deferred"},
    {"id": "docs", "transport": "http", "url": "https://mcp.example.com/mcp",
     "headers": {"Authorization": "Bearer 0123456789", "X-Team": "platform"}, "secretKeys": ["Authorization"],
     "allowedTools": ["search", "fetch"], "description": "Internal documentation search",
     "toolExposure": {"search": "direct", "*": "codemode-deferred"}},
    {"id": "fs", "transport": "stdio", "command": "/usr/bin/mcp-fs", "args": ["--root", "."], "cwd": "/work",
     "env": {"FS_TOKEN": "fs-secret"}, "secretKeys": ["FS_TOKEN"], "enabled": true},
    {"id": "shared-search", "transport": "http", "url": "http://127.0.0.1:7777/mcp", "credentials": "shared",
     "sharedAuthority": "search-team", "users": ["alice", "bob"]}
  ]
}`

func BenchmarkParse(b *testing.B) {
	body := []byte(benchRequest)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := spec.Parse(body); err != nil {
			b.Fatalf("Parse(benchRequest): %v", err)
		}
	}
}

func TestBenchRequestParses(t *testing.T) {
	t.Parallel()
	req, diags, err := spec.Parse([]byte(benchRequest))
	if err != nil {
		t.Fatalf("Parse(benchRequest): %v", err)
	}
	if len(req.Skills) != 3 || len(req.Servers) != 4 {
		t.Fatalf("Parse(benchRequest) kept %d skills and %d servers, want 3 and 4 (diagnostics %+v)", len(req.Skills), len(req.Servers), diags)
	}
}
