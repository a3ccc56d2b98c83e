package instance_test

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/instance"
	"github.com/loadout-dev/loadout/sdk/abi"
)

const secret = "tok-very-secret-4c1f"

// base is a stdio server with env, host env and a secret env value, and an http server with a
// secret header; sec maps their placeholders.
func base() (abi.Server, abi.Server, map[string]string) {
	stdio := abi.Server{
		ID: "files", Transport: abi.TransportStdio, Command: "/usr/bin/mcp-files", Args: []string{"--root", "."},
		Env:     []abi.Pair{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "MCP_ACCESS_TOKEN", Value: "{{loadout.secret.1}}", Secret: true}},
		HostEnv: []abi.Pair{{Name: "HOME", Value: "/home/u"}, {Name: "PATH", Value: "/bin"}},
		Cwd:     "/srv", Enabled: true, Timeout: 30, ToolsRestricted: true, AllowedTools: []string{"read"},
		Exposure: "direct", ToolExposure: []abi.Pair{{Name: "read", Value: "deferred"}},
	}
	http := abi.Server{
		ID: "docs", Transport: abi.TransportHTTP, URL: "https://docs.example.com/mcp", Enabled: true,
		Headers: []abi.Pair{{Name: "Authorization", Value: "Bearer {{loadout.secret.2}}", Secret: true}, {Name: "X-Client", Value: "loadout"}},
	}
	return stdio, http, map[string]string{"{{loadout.secret.1}}": secret, "{{loadout.secret.2}}": secret + "-2"}
}

func key(t *testing.T, scope string, s abi.Server, sec map[string]string) string {
	t.Helper()
	k, err := instance.Key(scope, s, sec)
	require.NoError(t, err)
	return k
}

func TestKeyIsAHexDigest(t *testing.T) {
	stdio, _, sec := base()
	k := key(t, "session", stdio, sec)
	b, err := hex.DecodeString(k)
	require.NoError(t, err, "hex")
	assert.Len(t, b, 32, "SHA-256")
	assert.Equal(t, k, key(t, "session", stdio, sec), "deterministic")
}

func TestKeyIgnoresOrderAndExposure(t *testing.T) {
	stdio, http, sec := base()
	want, wantHTTP := key(t, "space", stdio, sec), key(t, "space", http, sec)

	s := stdio
	s.Env = []abi.Pair{stdio.Env[2], stdio.Env[1], stdio.Env[0]}
	s.HostEnv = []abi.Pair{stdio.HostEnv[1], stdio.HostEnv[0]}
	assert.Equal(t, want, key(t, "space", s, sec), "env and host env in another order")

	s = stdio
	s.Exposure, s.ToolExposure = "hidden", nil
	assert.Equal(t, want, key(t, "space", s, sec), "exposure and toolExposure are not part of the connection")

	h := http
	h.Headers = []abi.Pair{http.Headers[1], http.Headers[0]}
	assert.Equal(t, wantHTTP, key(t, "space", h, sec), "headers in another order")

	// The same secret behind another placeholder number (another request) is the same value.
	s = stdio
	s.Env = []abi.Pair{stdio.Env[0], stdio.Env[1], {Name: "MCP_ACCESS_TOKEN", Value: "{{loadout.secret.7}}", Secret: true}}
	assert.Equal(t, want, key(t, "space", s, map[string]string{"{{loadout.secret.7}}": secret}), "the placeholder number does not matter")
}

func TestKeyChangesWithAnyValue(t *testing.T) {
	stdio, http, sec := base()
	seen := map[string]string{}
	add := func(name, k string) {
		t.Helper()
		if prev, dup := seen[k]; dup {
			t.Errorf("%s gives the same key as %s", name, prev)
		}
		seen[k] = name
	}
	add("stdio", key(t, "session", stdio, sec))
	add("http", key(t, "session", http, sec))
	add("scope space", key(t, "space", stdio, sec))
	add("scope app", key(t, "app", stdio, sec))
	for name, change := range map[string]func(s *abi.Server){
		"id":               func(s *abi.Server) { s.ID = "files2" },
		"command":          func(s *abi.Server) { s.Command = "/usr/bin/mcp-other" },
		"args":             func(s *abi.Server) { s.Args = []string{"--root", ".."} },
		"args order":       func(s *abi.Server) { s.Args = []string{".", "--root"} },
		"env value":        func(s *abi.Server) { s.Env = []abi.Pair{{Name: "A", Value: "1"}, {Name: "B", Value: "3"}, s.Env[2]} },
		"env name":         func(s *abi.Server) { s.Env = []abi.Pair{{Name: "A", Value: "1"}, {Name: "C", Value: "2"}, s.Env[2]} },
		"env removed":      func(s *abi.Server) { s.Env = s.Env[1:] },
		"host env":         func(s *abi.Server) { s.HostEnv = []abi.Pair{{Name: "HOME", Value: "/home/v"}, s.HostEnv[1]} },
		"cwd":              func(s *abi.Server) { s.Cwd = "/srv2" },
		"timeout":          func(s *abi.Server) { s.Timeout = 31 },
		"tools":            func(s *abi.Server) { s.AllowedTools = []string{"write"} },
		"tools restricted": func(s *abi.Server) { s.ToolsRestricted = false },
		"disabled":         func(s *abi.Server) { s.Enabled = false },
		"description":      func(s *abi.Server) { s.Description = "files" },
	} {
		s := stdio
		change(&s)
		add(name, key(t, "session", s, sec))
	}
	add("secret value", key(t, "session", stdio, map[string]string{"{{loadout.secret.1}}": secret + "x"}))
	h := http
	h.URL = "https://docs.example.com/mcp2"
	add("url", key(t, "session", h, sec))
	h = http
	h.Headers = []abi.Pair{http.Headers[0], {Name: "X-Client", Value: "other"}}
	add("header value", key(t, "session", h, sec))
}

// The document a key digests holds a secret only as its digest (the one sha256sum prints for
// the value), and is canonical JSON.
func TestDocumentHoldsNoSecret(t *testing.T) {
	_, http, sec := base()
	doc, err := instance.Document("session", http, sec)
	require.NoError(t, err)
	assert.NotContains(t, string(doc), secret, "no secret value")
	assert.NotContains(t, string(doc), "loadout.secret", "no placeholder")
	assert.Equal(t, `{"scope":"session","server":{"allowedTools":[],"args":[],"command":"","cwd":"","description":"","enabled":true,`+
		`"env":[],"headers":[["Authorization","Bearer {{sha256:5e788aac9d2ce9821d2ba0062c9f49139d94f3ed97756e8d0c40b705ee0a37f1}}"],["X-Client","loadout"]],`+
		`"hostEnv":[],"id":"docs","timeout":0,"toolsRestricted":false,"transport":"http","url":"https://docs.example.com/mcp"}}`, string(doc))
}
