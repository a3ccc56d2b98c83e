package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullRequest uses every field of abi.Request, with strings that need escaping.
func fullRequest() abi.Request {
	return abi.Request{
		ABIVersion: abi.Version,
		Harness:    "claude",
		Run:        abi.Run{AmbientAuth: true, User: "ada", BuiltinTools: []string{"Read", "Edit"}},
		Servers: []abi.Server{
			{
				ID: "files", Transport: abi.TransportStdio, Command: "/usr/bin/mcp-files",
				Args:    []string{"--root", "{{loadout.root.checkout}}", "quote\"back\\slash", "tab\tnl\n", "é中😀", "\u2028"},
				Env:     []abi.Pair{{Name: "TOKEN", Value: "{{loadout.secret.1}}", Secret: true}, {Name: "MODE", Value: "ro"}},
				HostEnv: []abi.Pair{{Name: "PATH", Value: "/usr/bin"}},
				Cwd:     "/tmp", ToolsRestricted: true, AllowedTools: []string{"read", "list"}, DeniedTools: []string{"write"},
				Description: "<files> & more", Enabled: true, Timeout: 12.5, Exposure: "deferred",
				ToolExposure: []abi.Pair{{Name: "read", Value: "direct"}},
				Lifecycle:    "lazy-keep-alive", IdleTimeout: 7.5,
			},
			{
				ID: "docs", Transport: abi.TransportHTTP, URL: "https://mcp.example.com/mcp",
				Headers:         []abi.Pair{{Name: "Authorization", Value: "Bearer {{loadout.secret.2}}", Secret: true}},
				ToolsRestricted: true, Enabled: false, // restricted to no tool at all
				OAuth: &abi.OAuth{ClientID: "my-client", CallbackPort: 8765, Scopes: []string{"read", "write"},
					AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"},
			},
		},
		Skills: []abi.Skill{
			{Name: "review", Description: "Reviews code", Instructions: "{{loadout.blob.1}}",
				Resources: []abi.Resource{{Path: "checklist.md", Content: "- [ ] \x01 control"}}},
			{Name: "empty"},
		},
	}
}

func TestDecodeRequestAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  abi.Request
	}{
		{"zero request (nil slices as null)", abi.Request{}},
		{"empty slices", abi.Request{ABIVersion: 1, Servers: []abi.Server{}, Skills: []abi.Skill{}}},
		{"every field", fullRequest()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := json.Marshal(tc.req)
			require.NoError(t, err, "json.Marshal(%s)", tc.name)
			got, err := decodeRequest(in)
			require.NoError(t, err, "decodeRequest(%s)", in)
			var want abi.Request
			require.NoError(t, json.Unmarshal(in, &want), "json.Unmarshal(%s)", in)
			assert.Equal(t, want, got, "decodeRequest(%s) differs from encoding/json", in)
			assert.Equal(t, tc.req, got, "decodeRequest(json.Marshal(req)) does not give req back")
		})
	}
}

func TestDecodeRequestAcceptsValidVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want abi.Request
	}{
		{"white space everywhere", " \n{ \"abiVersion\" :\t1 , \"run\" : { } }\r\n", abi.Request{ABIVersion: 1}},
		{"escapes in strings", `{"harness":"\u0063la\"u\\de\/\b\f\n\r\t\ud83d\ude00"}`, abi.Request{Harness: "cla\"u\\de/\b\f\n\r\t😀"}},
		{"escaped key", `{"h\u0061rness":"x"}`, abi.Request{Harness: "x"}},
		{"null values", `{"abiVersion":null,"harness":null,"run":null,"servers":null,"skills":null}`, abi.Request{}},
		{"number forms", `{"abiVersion":1,"servers":[{"timeout":1.5e1},{"timeout":-0},{"timeout":2E-1}]}`,
			abi.Request{ABIVersion: 1, Servers: []abi.Server{{Timeout: 15}, {Timeout: 0}, {Timeout: 0.2}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeRequest([]byte(tc.in))
			require.NoError(t, err, "decodeRequest(%s)", tc.in)
			assert.Equal(t, tc.want, got, "decodeRequest(%s)", tc.in)
		})
	}
}

func TestDecodeRequestRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
	}{
		{"empty input", ``},
		{"not an object", `[]`},
		{"unknown top-level field", `{"abiVersion":1,"extra":true}`},
		{"unknown nested field", `{"servers":[{"id":"a","shell":"sh"}]}`},
		{"unknown oauth field", `{"servers":[{"id":"a","oauth":{"clientSecret":"s"}}]}`},
		{"fractional callback port", `{"servers":[{"id":"a","oauth":{"callbackPort":1.5}}]}`},
		{"key differing in case", `{"Harness":"claude"}`},
		{"duplicate top-level key", `{"harness":"a","harness":"b"}`},
		{"duplicate nested key", `{"servers":[{"id":"a","env":[{"name":"X","name":"Y"}]}]}`},
		{"duplicate key spelled with an escape", `{"harness":"a","h\u0061rness":"b"}`},
		{"trailing object", `{"abiVersion":1}{"abiVersion":1}`},
		{"trailing garbage", `{"abiVersion":1} x`},
		{"truncated", `{"servers":[{"id":"a"`},
		{"missing colon", `{"harness" "a"}`},
		{"trailing comma", `{"harness":"a",}`},
		{"array trailing comma", `{"skills":[{"name":"a"},]}`},
		{"string for a bool", `{"run":{"ambientAuth":"true"}}`},
		{"number for a string", `{"harness":1}`},
		{"bool for an array", `{"servers":true}`},
		{"fractional abiVersion", `{"abiVersion":1.5}`},
		{"huge abiVersion", `{"abiVersion":99999999999}`},
		{"leading zero", `{"abiVersion":01}`},
		{"bare minus", `{"abiVersion":-}`},
		{"dot without digits", `{"servers":[{"timeout":1.}]}`},
		{"infinite timeout", `{"servers":[{"timeout":1e999}]}`},
		{"invalid UTF-8", "{\"harness\":\"a\xffb\"}"},
		{"invalid UTF-8 after an escape", "{\"harness\":\"\\n\xc3\"}"},
		{"raw control character", "{\"harness\":\"a\nb\"}"},
		{"lone high surrogate", `{"harness":"\ud83d"}`},
		{"lone low surrogate", `{"harness":"\ude00"}`},
		{"high surrogate with a non-low pair", `{"harness":"\ud83d\u0041"}`},
		{"invalid escape", `{"harness":"\x41"}`},
		{"short unicode escape", `{"harness":"\u12"}`},
		{"unterminated string", `{"harness":"abc`},
		{"misspelled literal", `{"run":{"ambientAuth":tru}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeRequest([]byte(tc.in))
			require.Error(t, err, "decodeRequest(%q) = %+v, want an error", tc.in, got)
			assert.True(t, errors.Is(err, errSyntax), "decodeRequest(%q) error %v does not wrap errSyntax", tc.in, err)
			assert.Equal(t, abi.Request{}, got, "decodeRequest(%q) returned a partial request with its error", tc.in)
		})
	}
}

// strictPlan decodes a plan the way a strict host does.
func strictPlan(t *testing.T, b []byte) abi.Plan {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p abi.Plan
	require.NoError(t, dec.Decode(&p), "strict decode of %s", b)
	require.False(t, dec.More(), "trailing data after plan %s", b)
	return p
}

func TestEncodePlanRoundTrips(t *testing.T) {
	t.Parallel()
	full := abi.Plan{
		Files: []abi.File{
			{Root: abi.RootRun, Path: "mcp.json", Mode: "0600", Format: abi.FormatJSON, Content: "{\"a\":\"{{loadout.secret.1}}\"}\n", Secret: true},
			{Root: abi.RootCheckout, Path: ".ctx/skill/x/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown, Content: "---\nname: x\n---\n\x00\x1f\x7f <&> \u2028\u2029 é😀"},
		},
		Args:       []string{"--mcp-config", "{{loadout.root.run}}/mcp.json", ""},
		Env:        []abi.Pair{{Name: "CODEX_HOME", Value: "{{loadout.root.config}}"}, {Name: "K", Value: "{{loadout.secret.2}}", Secret: true}},
		Prompt:     "Use \"files\"\tonly.\r\n",
		GitExclude: []string{".ctx/"},
		Warnings:   []abi.Warning{{Code: "c", Message: "m", Server: "s"}, {Code: "d", Message: "n", Skill: "k"}},
	}
	cases := []struct {
		name string
		plan abi.Plan
		want abi.Plan
	}{
		{"zero plan encodes empty arrays", abi.Plan{}, abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}},
		{"every field", full, full},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := encodePlan(tc.plan)
			require.NoError(t, err, "encodePlan(%+v)", tc.plan)
			assert.Equal(t, tc.want, strictPlan(t, b), "encodePlan then strict decode of %s", b)
			assert.NotContains(t, string(b), "\u2028", "encodePlan must escape U+2028")
			assert.NotContains(t, string(b), "\x7f", "encodePlan must escape DEL")
		})
	}
}

func TestEncodePlanRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		plan abi.Plan
	}{
		{"file content", abi.Plan{Files: []abi.File{{Content: "a\xffb"}}}},
		{"arg", abi.Plan{Args: []string{"\xc3"}}},
		{"env value", abi.Plan{Env: []abi.Pair{{Name: "A", Value: "\xed\xa0\x80"}}}},
		{"warning message", abi.Plan{Warnings: []abi.Warning{{Code: "c", Message: "\x80"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := encodePlan(tc.plan)
			assert.Error(t, err, "encodePlan(%+v) = %q, want an error", tc.plan, b)
		})
	}
}

func TestEncodeManifestAndError(t *testing.T) {
	t.Parallel()
	m := abi.Manifest{Name: "render.x", Version: "1.2.3", ABIVersion: 1, Harness: "x", Transports: []string{"stdio"}, NativeSkills: true, Roots: []string{"run", "config"}}
	b, err := encodeManifest(m)
	require.NoError(t, err, "encodeManifest(%+v)", m)
	var got abi.Manifest
	require.NoError(t, json.Unmarshal(b, &got), "json.Unmarshal(%s)", b)
	assert.Equal(t, m, got, "encodeManifest round trip")

	eb := encodeError(abi.CodeInternal, "bad \xff byte \"quoted\"")
	var er abi.ErrorResponse
	require.NoError(t, json.Unmarshal(eb, &er), "json.Unmarshal(%s)", eb)
	assert.Equal(t, abi.ErrorResponse{Error: abi.Error{Code: abi.CodeInternal, Message: "bad \uFFFD byte \"quoted\""}}, er, "encodeError with invalid UTF-8")
}

func FuzzDecodeRequest(f *testing.F) {
	full, err := json.Marshal(fullRequest())
	require.NoError(f, err)
	for _, s := range []string{string(full), `{}`, `{"servers":[{"env":[{"name":"a","value":"b","secret":true}]}]}`, `{"harness":"\ud83d\ude00"}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := decodeRequest(in)
		if err != nil {
			return
		}
		// Whatever the strict decoder accepts, encoding/json accepts with the same meaning.
		var want abi.Request
		require.NoError(t, json.Unmarshal(in, &want), "decodeRequest accepted %q, encoding/json did not", in)
		require.Equal(t, want, got, "decodeRequest(%q) disagrees with encoding/json", in)
	})
}

// benchRequest is a request of realistic size: eight servers and four skills with inline bodies.
func benchRequest() []byte {
	req := fullRequest()
	for i := 0; i < 3; i++ {
		req.Servers = append(req.Servers, req.Servers...)
	}
	body := strings.Repeat("Review the change for correctness, style and tests. Use \"gofmt\".\n", 48)
	for i := 0; i < 4; i++ {
		req.Skills = append(req.Skills, abi.Skill{Name: "s", Description: "d", Instructions: body})
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkDecodeRequest(b *testing.B) {
	in := benchRequest()
	b.Run("sdk", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeRequest(in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json-strict", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(in))
			dec.DisallowUnknownFields()
			var r abi.Request
			if err := dec.Decode(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEncodePlan(b *testing.B) {
	plan := abi.Plan{Prompt: "p", Args: []string{"--strict-mcp-config"}}
	content := strings.Repeat(`{"mcpServers":{"files":{"command":"/usr/bin/x","args":["a","b"]}}}`+"\n", 64)
	for i := 0; i < 8; i++ {
		plan.Files = append(plan.Files, abi.File{Root: "run", Path: "f.json", Mode: "0600", Format: "json", Content: content})
	}
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodePlan(plan); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(plan); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func jsonUnmarshalStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
