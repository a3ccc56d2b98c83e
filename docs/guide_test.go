package docs

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/harness"
	"github.com/loadout-dev/loadout/sdk/profile/profileyaml"
)

// fenced returns the bodies of the code blocks of lang in a Markdown document, in order.
func fenced(doc, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```"+lang+"\n(.*?)^```$").FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestAddingAHarnessExamples: the profile ADDING-A-HARNESS.md shows parses as a profile, with
// the servers flag and the pinned $version it explains, and its main.go is Go.
func TestAddingAHarnessExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ADDING-A-HARNESS.md"))
	require.NoError(t, err)
	yamls := fenced(string(b), "yaml")
	require.Len(t, yamls, 1, "one profile example")
	p, err := plan.ParseProfile([]byte(yamls[0]))
	require.NoError(t, err, "the guide's profile parses")
	assert.Equal(t, "qwen", p.Harness)
	assert.Contains(t, p.Config.Pinned, "$version")
	var servers []string
	for _, a := range p.Args {
		if a.Value == "servers" {
			servers = append(servers, a.Flag)
		}
	}
	assert.Equal(t, []string{"--allowed-mcp-server-names"}, servers)

	gos := fenced(string(b), "go")
	require.Len(t, gos, 1, "one main.go example")
	_, err = parser.ParseFile(token.NewFileSet(), "main.go", gos[0], parser.AllErrors)
	assert.NoError(t, err, "the guide's main.go parses")

	// The plugin the guide builds — its profile on sdk/harness and nothing else — renders a plan
	// the host accepts.
	prof, err := profileyaml.Parse([]byte(yamls[0]))
	require.NoError(t, err)
	m := abi.Manifest{Name: "render.qwen", Version: "1.0.0", ABIVersion: abi.Version, Harness: "qwen",
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, NativeSkills: true, Roots: []string{abi.RootConfig}}
	r, err := harness.New(harness.Renderer{Manifest: m, Profile: prof, Name: "Qwen Code"})
	require.NoError(t, err, "the guide's profile on sdk/harness")
	req := abi.Request{ABIVersion: abi.Version, Harness: "qwen", Servers: []abi.Server{
		{ID: "files", Transport: abi.TransportStdio, Command: "/usr/bin/files", Args: []string{"$HOME"}, Enabled: true},
		{ID: "docs", Transport: abi.TransportHTTP, URL: "https://docs.example/mcp", Enabled: true},
	}}
	pl, err := r.Render(req)
	require.NoError(t, err)
	_, err = plan.Check(&pl, plan.Input{Manifest: m, Profile: p, Request: req})
	assert.NoError(t, err, "the host's check of the guide's plugin's plan")
}
