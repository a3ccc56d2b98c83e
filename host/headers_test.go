package host

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
)

// TestHeaderWarnings: a header value with a character above U+00FF is warned about, naming the
// server and the header, exactly where the harness's profile says it sends Latin-1 only; a
// Latin-1 value ("café") is not.
func TestHeaderWarnings(t *testing.T) {
	profiles, err := plan.LoadProfiles(plugins.Profiles)
	require.NoError(t, err)
	p := prepare(t, `{"mcpServers":[
		{"id":"docs","transport":"http","url":"https://a.example.com/mcp","headers":{"X-Latin":"café","X-Euro":"5 €","X-Name":"東京"}},
		{"id":"plain","transport":"http","url":"https://b.example.com/mcp","headers":{"X-Ok":"ascii"}}]}`)
	for h, want := range map[string][]Warning{
		"claude": {
			{Code: CodeHeaderUnsendable, Server: "docs", Message: `header "X-Euro" holds a character above U+00FF, which claude cannot send (it sends header values as Latin-1 only): every request to the server fails`},
			{Code: CodeHeaderUnsendable, Server: "docs", Message: `header "X-Name" holds a character above U+00FF, which claude cannot send (it sends header values as Latin-1 only): every request to the server fails`},
		},
		"pi":      {{Code: CodeHeaderUnsendable, Server: "docs"}, {Code: CodeHeaderUnsendable, Server: "docs"}},
		"gemini":  {{Code: CodeHeaderUnsendable, Server: "docs"}, {Code: CodeHeaderUnsendable, Server: "docs"}},
		"codex":   nil,
		"copilot": nil,
	} {
		got := headerWarnings(p.Vetted, profiles[h])
		if h != "claude" {
			for i := range got {
				got[i].Message = ""
			}
		}
		assert.Equal(t, want, got, "headerWarnings(%s)", h)
	}
}
