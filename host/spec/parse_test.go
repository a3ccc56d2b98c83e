package spec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// diag is the part of a Diagnostic the tables compare: where and which rule.
type diag struct{ Kind, Field, Code string }

func diagsOf(ds []spec.Diagnostic) []diag {
	out := make([]diag, len(ds))
	for i, d := range ds {
		out[i] = diag{d.Kind, d.Field, d.Code}
	}
	return out
}

func mustParse(t *testing.T, body string) (*spec.Request, []spec.Diagnostic) {
	t.Helper()
	req, diags, err := spec.Parse([]byte(body))
	require.NoError(t, err, "Parse(%q)", body)
	require.NotNil(t, req, "Parse(%q) request", body)
	require.NotNil(t, diags, "Parse(%q) diagnostics", body)
	for _, d := range diags {
		require.NotEmpty(t, d.Message, "Parse(%q) diagnostic %+v has no message", body, d)
	}
	return req, diags
}

func TestParseTopLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		body      string
		want      spec.Request
		wantDiags []diag
	}{
		{
			name: "empty request",
			body: `{}`,
			want: spec.Request{Skills: []spec.Skill{}, Servers: []spec.Server{}, Tokens: []spec.Pair{}},
		},
		{
			name: "harness run tokens",
			body: `{"harness":"claude","run":{"ambientAuth":true,"user":"alice"},"tokens":{"gh":"t1","api":"t2"}}`,
			want: spec.Request{
				Harness: "claude", Run: spec.Run{AmbientAuth: true, User: "alice", HasUser: true},
				Skills: []spec.Skill{}, Servers: []spec.Server{},
				Tokens: []spec.Pair{{Name: "gh", Value: "t1"}, {Name: "api", Value: "t2"}},
			},
		},
		{
			name: "empty user is no user",
			body: `{"run":{"user":""}}`,
			want: spec.Request{Skills: []spec.Skill{}, Servers: []spec.Server{}, Tokens: []spec.Pair{}},
		},
		{
			name: "nulls are absent",
			body: `{"harness":null,"run":null,"skills":null,"mcpServers":null,"tokens":null}`,
			want: spec.Request{Skills: []spec.Skill{}, Servers: []spec.Server{}, Tokens: []spec.Pair{}},
		},
		{
			name: "wrong types are ignored with a diagnostic",
			body: `{"harness":1,"run":[],"skills":{},"mcpServers":"x","tokens":[]}`,
			want: spec.Request{Skills: []spec.Skill{}, Servers: []spec.Server{}, Tokens: []spec.Pair{}},
			wantDiags: []diag{
				{"request", "harness", spec.CodeWrongType},
				{"request", "run", spec.CodeWrongType},
				{"request", "skills", spec.CodeWrongType},
				{"request", "mcpServers", spec.CodeWrongType},
				{"request", "tokens", spec.CodeWrongType},
			},
		},
		{
			name: "run fields of the wrong type",
			body: `{"run":{"ambientAuth":"yes","user":5}}`,
			want: spec.Request{Skills: []spec.Skill{}, Servers: []spec.Server{}, Tokens: []spec.Pair{}},
			wantDiags: []diag{
				{"request", "run.ambientAuth", spec.CodeWrongType},
				{"request", "run.user", spec.CodeWrongType},
			},
		},
		{
			name: "non-string tokens removed in order",
			body: `{"tokens":{"a":"1","b":2,"c":"3"}}`,
			want: spec.Request{
				Skills: []spec.Skill{}, Servers: []spec.Server{},
				Tokens: []spec.Pair{{Name: "a", Value: "1"}, {Name: "c", Value: "3"}},
			},
			wantDiags: []diag{{"request", "tokens.b", spec.CodeNonStringEntry}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, diags := mustParse(t, tc.body)
			assert.Equal(t, tc.want, *req, "Parse(%q) request", tc.body)
			assert.Equal(t, orNone(tc.wantDiags), diagsOf(diags), "Parse(%q) diagnostics", tc.body)
		})
	}
}

func orNone(d []diag) []diag {
	if d == nil {
		return []diag{}
	}
	return d
}

func TestParseSkills(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		skills    string // the skills array
		want      []spec.Skill
		wantDiags []diag
	}{
		{
			name:   "kept as given",
			skills: `[{"name":"deploy","description":"Ships it.","instructions":"Do it.","resources":[{"relPath":"a.md","content":"A"}]}]`,
			want: []spec.Skill{{Index: 0, Name: "deploy", Description: "Ships it.", Instructions: "Do it.",
				Resources: []spec.Resource{{RelPath: "a.md", Content: "A"}}}},
		},
		{
			name:   "instructions required",
			skills: `[{"name":"a"},{"name":"b","instructions":""},{"name":"c","instructions":42},{"name":"d","instructions":null},{"name":"e","instructions":"  "}]`,
			want:   []spec.Skill{{Index: 4, Name: "e", Instructions: "  ", Resources: []spec.Resource{}}},
			wantDiags: []diag{
				{"skill", "skills[0].instructions", spec.CodeMissingInstructions},
				{"skill", "skills[1].instructions", spec.CodeMissingInstructions},
				{"skill", "skills[2].instructions", spec.CodeMissingInstructions},
				{"skill", "skills[3].instructions", spec.CodeMissingInstructions},
			},
		},
		{
			name:   "non-object entries ignored",
			skills: `[1,"x",null,[],{"name":"ok","instructions":"i"}]`,
			want:   []spec.Skill{{Index: 4, Name: "ok", Instructions: "i", Resources: []spec.Resource{}}},
			wantDiags: []diag{
				{"skill", "skills[0]", spec.CodeNotAnObject},
				{"skill", "skills[1]", spec.CodeNotAnObject},
				{"skill", "skills[2]", spec.CodeNotAnObject},
				{"skill", "skills[3]", spec.CodeNotAnObject},
			},
		},
		{
			name:   "names sanitized, fallback, changes reported",
			skills: `[{"name":"../x/My Skill!","instructions":"i"},{"instructions":"i"},{"name":7,"instructions":"i"}]`,
			want:   []spec.Skill{{Index: 0, Name: "MySkill", Instructions: "i", Resources: []spec.Resource{}}, {Index: 1, Name: "skill", Instructions: "i", Resources: []spec.Resource{}}},
			wantDiags: []diag{
				{"skill", "skills[0].name", spec.CodeNameChanged},
				{"skill", "skills[1].name", spec.CodeNameFallback},
				{"skill", "skills[2].name", spec.CodeDuplicateName},
			},
		},
		{
			name:   "validate then de-duplicate case-insensitively, first wins",
			skills: `[{"name":"Deploy"},{"name":"evil/deploy","instructions":"first"},{"name":"DEPLOY","instructions":"second"},{"name":"CON","instructions":"i"},{"name":"nul.txt","instructions":"i"}]`,
			want: []spec.Skill{
				{Index: 1, Name: "deploy", Instructions: "first", Resources: []spec.Resource{}},
				{Index: 3, Name: "skill", Instructions: "i", Resources: []spec.Resource{}},
			},
			wantDiags: []diag{
				{"skill", "skills[0].instructions", spec.CodeMissingInstructions},
				{"skill", "skills[1].name", spec.CodeNameChanged},
				{"skill", "skills[2].name", spec.CodeDuplicateName},
				{"skill", "skills[3].name", spec.CodeNameFallback},
				{"skill", "skills[4].name", spec.CodeDuplicateName},
			},
		},
		{
			name:   "descriptions",
			skills: `[{"name":"a","instructions":"i","description":5},{"name":"b","instructions":"i","description":null},{"name":"c","instructions":"i","description":"x\ny\u2028z"}]`,
			want: []spec.Skill{
				{Index: 0, Name: "a", Instructions: "i", Resources: []spec.Resource{}},
				{Index: 1, Name: "b", Instructions: "i", Resources: []spec.Resource{}},
				{Index: 2, Name: "c", Description: "x y z", Instructions: "i", Resources: []spec.Resource{}},
			},
			wantDiags: []diag{
				{"skill", "skills[0].description", spec.CodeWrongType},
				{"skill", "skills[2].description", spec.CodeDescriptionChanged},
			},
		},
		{
			name:   "an unknown skill field drops the skill; resources of the wrong type are ignored",
			skills: `[{"name":"a","instructions":"i","version":2},{"name":"b","instructions":"i","resources":{"a":"b"}}]`,
			want:   []spec.Skill{{Index: 1, Name: "b", Instructions: "i", Resources: []spec.Resource{}}},
			wantDiags: []diag{
				{"skill", "skills[0].version", spec.CodeUnknownField},
				{"skill", "skills[1].resources", spec.CodeWrongType},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"skills":` + tc.skills + `}`
			req, diags := mustParse(t, body)
			assert.Equal(t, tc.want, req.Skills, "Parse(%q) skills", body)
			assert.Equal(t, orNone(tc.wantDiags), diagsOf(diags), "Parse(%q) diagnostics", body)
		})
	}
}

func TestParseResources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		resources string
		want      []string // kept relPaths in order
		wantDiags []diag
	}{
		{
			name:      "non-string fields",
			resources: `[{"relPath":"a.md","content":5},{"relPath":"b.md","content":null},{"relPath":"c.md","content":""},{"relPath":5,"content":"x"},{"content":"x"},"str",{"relPath":"d.md"}]`,
			want:      []string{"c.md"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[0].content", spec.CodeInvalidContent},
				{"resource", "skills[0].resources[1].content", spec.CodeInvalidContent},
				{"resource", "skills[0].resources[3].relPath", spec.CodeInvalidPath},
				{"resource", "skills[0].resources[4].relPath", spec.CodeInvalidPath},
				{"resource", "skills[0].resources[5]", spec.CodeNotAnObject},
				{"resource", "skills[0].resources[6].content", spec.CodeInvalidContent},
			},
		},
		{
			name:      "sanitized paths are reported and de-duplicated after validation",
			resources: `[{"relPath":"../a.md","content":"x"},{"relPath":"./a.md","content":"x"},{"relPath":"A.MD","content":"x"},{"relPath":"a\\b.md","content":"x"}]`,
			want:      []string{"a.md", "a/b.md"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[0].relPath", spec.CodePathTraversal},
				{"resource", "skills[0].resources[1].relPath", spec.CodePathChanged},
				{"resource", "skills[0].resources[2].relPath", spec.CodeDuplicatePath},
				{"resource", "skills[0].resources[3].relPath", spec.CodePathChanged},
			},
		},
		{
			name:      "file then directory conflict",
			resources: `[{"relPath":"a","content":"x"},{"relPath":"a/b.md","content":"x"},{"relPath":"A/c/d.md","content":"x"}]`,
			want:      []string{"a"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[1].relPath", spec.CodePathConflict},
				{"resource", "skills[0].resources[2].relPath", spec.CodePathConflict},
			},
		},
		{
			name:      "directory then file conflict",
			resources: `[{"relPath":"x/y/z.md","content":"x"},{"relPath":"x","content":"x"},{"relPath":"X/Y","content":"x"},{"relPath":"x/y2","content":"x"}]`,
			want:      []string{"x/y/z.md", "x/y2"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[1].relPath", spec.CodePathConflict},
				{"resource", "skills[0].resources[2].relPath", spec.CodePathConflict},
			},
		},
		{
			name:      "a dropped resource claims no path",
			resources: `[{"relPath":"a.md","content":1},{"relPath":"a.md","content":"kept"},{"relPath":"-a/b","content":"x"},{"relPath":"a","content":"x"}]`,
			want:      []string{"a.md", "a"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[0].content", spec.CodeInvalidContent},
				{"resource", "skills[0].resources[2].relPath", spec.CodeLeadingDash},
			},
		},
		{
			name:      "reserved SKILL.md",
			resources: `[{"relPath":"SKILL.md","content":"x"},{"relPath":"Skill.md/x","content":"x"},{"relPath":"docs/SKILL.md","content":"x"},{"relPath":"docs/notes.md","content":"x"}]`,
			want:      []string{"docs/notes.md"},
			wantDiags: []diag{
				{"resource", "skills[0].resources[0].relPath", spec.CodeReservedPath},
				{"resource", "skills[0].resources[1].relPath", spec.CodeReservedPath},
				{"resource", "skills[0].resources[2].relPath", spec.CodeReservedPath},
			},
		},
		{
			name:      "an unknown resource field drops the resource",
			resources: `[{"relPath":"a.md","content":"x","mode":"0755"},{"relPath":"b.md","content":"y"}]`,
			want:      []string{"b.md"},
			wantDiags: []diag{{"resource", "skills[0].resources[0].mode", spec.CodeUnknownField}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"skills":[{"name":"s","instructions":"i","resources":` + tc.resources + `}]}`
			req, diags := mustParse(t, body)
			require.Len(t, req.Skills, 1, "Parse(%q) skills", body)
			assert.Equal(t, tc.want, relPaths(req.Skills[0]), "Parse(%q) kept resources", body)
			assert.Equal(t, orNone(tc.wantDiags), diagsOf(diags), "Parse(%q) diagnostics", body)
		})
	}
}

func relPaths(sk spec.Skill) []string {
	out := []string{}
	for _, r := range sk.Resources {
		out = append(out, r.RelPath)
	}
	return out
}

func TestParseResourceCaps(t *testing.T) {
	t.Parallel()
	type res struct {
		RelPath string `json:"relPath"`
		Content string `json:"content"`
	}
	build := func(rs []res) string {
		b, err := json.Marshal(map[string]any{"skills": []any{map[string]any{"name": "s", "instructions": "i", "resources": rs}}})
		require.NoError(t, err, "json.Marshal of the test request")
		return string(b)
	}

	t.Run("count", func(t *testing.T) {
		t.Parallel()
		rs := make([]res, spec.MaxResources+3)
		for i := range rs {
			rs[i] = res{RelPath: "f" + itoa(i) + ".md"}
		}
		rs[1].RelPath = "f0.md" // a duplicate does not count against the cap
		req, diags := mustParse(t, build(rs))
		require.Len(t, req.Skills, 1, "Parse of %d resources: skills", len(rs))
		assert.Len(t, req.Skills[0].Resources, spec.MaxResources, "Parse of %d resources: kept", len(rs))
		assert.Equal(t, "f"+itoa(spec.MaxResources)+".md", req.Skills[0].Resources[spec.MaxResources-1].RelPath,
			"Parse of %d resources: last kept", len(rs))
		assert.Equal(t, []diag{
			{"resource", "skills[0].resources[1].relPath", spec.CodeDuplicatePath},
			{"resource", "skills[0].resources[" + itoa(spec.MaxResources+1) + "]", spec.CodeTooManyResources},
			{"resource", "skills[0].resources[" + itoa(spec.MaxResources+2) + "]", spec.CodeTooManyResources},
		}, diagsOf(diags), "Parse of %d resources: diagnostics", len(rs))
	})

	t.Run("size", func(t *testing.T) {
		t.Parallel()
		big := strings.Repeat("x", spec.MaxResourceBytes)
		rs := []res{{"too-big.md", big + "x"}}
		for i := 0; i < spec.MaxSkillResourceBytes/spec.MaxResourceBytes+1; i++ {
			rs = append(rs, res{"f" + itoa(i) + ".md", big})
		}
		rs = append(rs, res{"small.md", ""})
		req, diags := mustParse(t, build(rs))
		require.Len(t, req.Skills, 1, "Parse of large resources: skills")
		paths := relPaths(req.Skills[0])
		n := spec.MaxSkillResourceBytes / spec.MaxResourceBytes
		assert.Len(t, paths, n+1, "Parse of large resources: kept %q", paths)
		assert.Equal(t, "small.md", paths[len(paths)-1], "Parse of large resources: an empty resource still fits")
		assert.Equal(t, []diag{
			{"resource", "skills[0].resources[0].content", spec.CodeContentTooLarge},
			{"resource", "skills[0].resources[" + itoa(n+1) + "].content", spec.CodeContentTooLarge},
		}, diagsOf(diags), "Parse of large resources: diagnostics")
	})
}

func TestParseServers(t *testing.T) {
	t.Parallel()
	base := func(id string) spec.Server {
		return spec.Server{
			ID: id, Source: "catalog", Transport: "stdio", Enabled: true, Command: "npx",
			Args: []string{}, Env: []spec.Pair{}, Headers: []spec.Pair{}, AllowedTools: []string{},
			SecretKeys: []string{}, ToolExposure: []spec.Pair{}, Users: []string{},
			Availability: "all", Scope: "session", Harnesses: []string{},
		}
	}
	tests := []struct {
		name      string
		servers   string
		want      func() []spec.Server
		wantDiags []diag
	}{
		{
			name:    "ids",
			servers: `[{"id":"ok","command":"npx"},{"id":"Bad","command":"npx"},{"id":5,"command":"npx"},{"command":"npx"},{"id":"a__b_","command":"npx"},{"id":"ok","command":"npx"}]`,
			want: func() []spec.Server {
				s0, s4, s5 := base("ok"), base("a__b_"), base("ok")
				s4.Index, s5.Index = 4, 5
				return []spec.Server{s0, s4, s5}
			},
			wantDiags: []diag{
				{"server", "mcpServers[1].id", spec.CodeInvalidID},
				{"server", "mcpServers[2].id", spec.CodeInvalidID},
				{"server", "mcpServers[3].id", spec.CodeInvalidID},
			},
		},
		{
			name:    "transport",
			servers: `[{"id":"a","transport":"HTTP","url":"https://x/"},{"id":"b","transport":"sse","command":"npx"},{"id":"c","transport":1,"command":"npx"},{"id":"d","transport":"http ","url":"https://x/"},{"id":"e","transport":null,"command":"npx"},{"id":"f","transport":"stdio","command":"npx"},{"id":"g","transport":"http","url":"https://x/"}]`,
			want: func() []spec.Server {
				e, f, g := base("e"), base("f"), base("g")
				e.Index, f.Index, g.Index = 4, 5, 6
				g.Transport, g.Command, g.URL = "http", "", "https://x/"
				return []spec.Server{e, f, g}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].transport", spec.CodeInvalidTransport},
				{"server", "mcpServers[1].transport", spec.CodeInvalidTransport},
				{"server", "mcpServers[2].transport", spec.CodeInvalidTransport},
				{"server", "mcpServers[3].transport", spec.CodeInvalidTransport},
			},
		},
		{
			name:    "stdio command",
			servers: `[{"id":"a"},{"id":"b","command":""},{"id":"c","command":["npx"]},{"id":"d","command":" "},{"id":"e","command":" npx"},{"id":"f","command":"np\nx"},{"id":"g","command":"-e"},{"id":"h","command":"a\u0000"},{"id":"i","command":null}]`,
			want:    func() []spec.Server { return []spec.Server{} },
			wantDiags: []diag{
				{"server", "mcpServers[0].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[1].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[2].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[3].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[4].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[5].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[6].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[7].command", spec.CodeInvalidCommand},
				{"server", "mcpServers[8].command", spec.CodeInvalidCommand},
			},
		},
		{
			name:    "http url must be a string, content is policy",
			servers: `[{"id":"a","transport":"http"},{"id":"b","transport":"http","url":1},{"id":"c","transport":"http","url":null},{"id":"d","transport":"http","url":"http://evil.example/","command":"npx"}]`,
			want: func() []spec.Server {
				d := base("d")
				d.Index, d.Transport, d.Command, d.URL = 3, "http", "", "http://evil.example/"
				return []spec.Server{d}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].url", spec.CodeInvalidURL},
				{"server", "mcpServers[1].url", spec.CodeInvalidURL},
				{"server", "mcpServers[2].url", spec.CodeInvalidURL},
				{"server", "mcpServers[3].command", spec.CodeFieldIgnored},
			},
		},
		{
			name:    "string lists and maps keep strings in order",
			servers: `[{"id":"a","command":"npx","args":["-y",1,"pkg","a\u0000b",""],"env":{"B":"2","A":1,"C":"3"},"headers":{"X-A":"v","X-B":null},"secretKeys":["K",2],"users":["bob"],"url":"https://ignored/"}]`,
			want: func() []spec.Server {
				s := base("a")
				s.Args = []string{"-y", "pkg", ""}
				s.Env = []spec.Pair{{Name: "B", Value: "2"}, {Name: "C", Value: "3"}}
				s.Headers = []spec.Pair{{Name: "X-A", Value: "v"}}
				s.SecretKeys = []string{"K"}
				s.Users, s.HasUsers = []string{"bob"}, true
				return []spec.Server{s}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].args[1]", spec.CodeNonStringEntry},
				{"server", "mcpServers[0].args[3]", spec.CodeNULInArg},
				{"server", "mcpServers[0].env.A", spec.CodeNonStringEntry},
				{"server", "mcpServers[0].headers[\"X-B\"]", spec.CodeNonStringEntry},
				{"server", "mcpServers[0].secretKeys[1]", spec.CodeNonStringEntry},
				{"server", "mcpServers[0].url", spec.CodeFieldIgnored},
			},
		},
		{
			name:    "list and map fields of the wrong type",
			servers: `[{"id":"a","command":"npx","args":"--evil","env":["A=1"],"headers":"h","secretKeys":"K"}]`,
			want:    func() []spec.Server { return []spec.Server{base("a")} },
			wantDiags: []diag{
				{"server", "mcpServers[0].args", spec.CodeWrongType},
				{"server", "mcpServers[0].env", spec.CodeWrongType},
				{"server", "mcpServers[0].headers", spec.CodeWrongType},
				{"server", "mcpServers[0].secretKeys", spec.CodeWrongType},
			},
		},
		{
			name:    "allowedTools declared by any non-null value",
			servers: `[{"id":"a","command":"npx","allowedTools":[]},{"id":"b","command":"npx","allowedTools":[1]},{"id":"c","command":"npx","allowedTools":"read"},{"id":"d","command":"npx","allowedTools":null},{"id":"e","command":"npx"},{"id":"f","command":"npx","allowedTools":["x,Bash","read"]}]`,
			want: func() []spec.Server {
				a, b, c, d, e, f := base("a"), base("b"), base("c"), base("d"), base("e"), base("f")
				b.Index, c.Index, d.Index, e.Index, f.Index = 1, 2, 3, 4, 5
				a.ToolsDeclared, b.ToolsDeclared, c.ToolsDeclared, f.ToolsDeclared = true, true, true, true
				f.AllowedTools = []string{"x,Bash", "read"}
				return []spec.Server{a, b, c, d, e, f}
			},
			wantDiags: []diag{
				{"server", "mcpServers[1].allowedTools[0]", spec.CodeNonStringEntry},
				{"server", "mcpServers[2].allowedTools", spec.CodeWrongType},
			},
		},
		{
			name: "optional fields",
			servers: `[{"id":"a","command":"npx","description":"Docs\nsearch","enabled":false,"timeout":30.5,"exposure":"codemode-deferred",` +
				`"toolExposure":{"search":"direct","*":"codemode-deferred"},"cwd":"/w","credentials":"shared","sharedAuthority":"team","users":null,` +
				`"availability":"opt-in","scope":"space","harnesses":["claude","pi"]},{"id":"b","command":"npx","disabled":true}]`,
			want: func() []spec.Server {
				s := base("a")
				s.Description, s.Enabled, s.Disabled, s.Timeout, s.Exposure = "Docs search", false, true, 30.5, "codemode"
				s.Availability, s.Scope, s.Harnesses, s.HasHarnesses = "opt-in", "space", []string{"claude", "pi"}, true
				b := base("b")
				b.Index, b.Enabled, b.Disabled = 1, false, true
				s.ToolExposure = []spec.Pair{{Name: "search", Value: "direct"}, {Name: "*", Value: "codemode"}}
				s.Cwd, s.Credentials, s.SharedAuthority = "/w", "shared", "team"
				return []spec.Server{s, b}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].description", spec.CodeDescriptionChanged},
			},
		},
		{
			name: "bad optional values are removed, the server stays",
			servers: `[{"id":"a","command":"npx","description":1,"timeout":0,"cwd":5,"sharedAuthority":[]},` +
				`{"id":"b","command":"npx","timeout":-1},{"id":"c","command":"npx","timeout":"30"},{"id":"d","command":"npx","timeout":1e999}]`,
			want: func() []spec.Server {
				b, c, d := base("b"), base("c"), base("d")
				b.Index, c.Index, d.Index = 1, 2, 3
				return []spec.Server{base("a"), b, c, d}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].description", spec.CodeWrongType},
				{"server", "mcpServers[0].timeout", spec.CodeInvalidValue},
				{"server", "mcpServers[0].cwd", spec.CodeWrongType},
				{"server", "mcpServers[0].sharedAuthority", spec.CodeWrongType},
				{"server", "mcpServers[1].timeout", spec.CodeInvalidValue},
				{"server", "mcpServers[2].timeout", spec.CodeWrongType},
				{"server", "mcpServers[3].timeout", spec.CodeInvalidValue},
			},
		},
		{
			// A field that narrows access never fails open: a bad value drops the server.
			name: "bad values of fields that narrow access drop the server",
			servers: `[{"id":"a","command":"npx","credentials":"User"},{"id":"b","command":"npx","credentials":1},` +
				`{"id":"c","command":"npx","users":["","alice"]},{"id":"d","command":"npx","users":["bob","bob"]},{"id":"e","command":"npx","users":"bob"},` +
				`{"id":"f","command":"npx","users":["bob",{}]},{"id":"g","command":"npx","enabled":"no"},{"id":"h","command":"npx","disabled":1},` +
				`{"id":"i","command":"npx","enabled":true,"disabled":true},{"id":"j","command":"npx","availability":"optin"},` +
				`{"id":"k","command":"npx","exposure":"loud"},{"id":"l","command":"npx","exposure":3},{"id":"m","command":"npx","toolExposure":{"x":"loud"}},` +
				`{"id":"n","command":"npx","toolExposure":{"y":1}},{"id":"o","command":"npx","toolExposure":[]},{"id":"p","command":"npx","scope":"global"},` +
				`{"id":"q","command":"npx","harnesses":"claude"},{"id":"r","command":"npx","harnesses":["Claude Code"]},{"id":"s","command":"npx","enabled":true,"disabled":null}]`,
			want: func() []spec.Server {
				s := base("s")
				s.Index = 18
				return []spec.Server{s}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0].credentials", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[1].credentials", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[2].users[0]", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[3].users[1]", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[4].users", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[5].users[1]", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[6].enabled", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[7].disabled", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[8].disabled", spec.CodeEnabledAndDisabled},
				{"server", "mcpServers[9].availability", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[10].exposure", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[11].exposure", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[12].toolExposure.x", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[13].toolExposure.y", spec.CodeNonStringEntry},
				{"server", "mcpServers[13].toolExposure", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[14].toolExposure", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[15].scope", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[16].harnesses", spec.CodeAccessFieldInvalid},
				{"server", "mcpServers[17].harnesses[0]", spec.CodeAccessFieldInvalid},
			},
		},
		{
			name:    "non-object entries are ignored, an unknown field drops its server",
			servers: `[null,{"id":"a","command":"npx","type":"stdio"},{"id":"b","command":"npx"}]`,
			want: func() []spec.Server {
				b := base("b")
				b.Index = 2
				return []spec.Server{b}
			},
			wantDiags: []diag{
				{"server", "mcpServers[0]", spec.CodeNotAnObject},
				{"server", "mcpServers[1].type", spec.CodeUnknownField},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := `{"mcpServers":` + tc.servers + `}`
			req, diags := mustParse(t, body)
			assert.Equal(t, tc.want(), req.Servers, "Parse(%q) servers", body)
			assert.Equal(t, orNone(tc.wantDiags), diagsOf(diags), "Parse(%q) diagnostics", body)
		})
	}
}

func TestParseDiagnosticNames(t *testing.T) {
	t.Parallel()
	body := `{"skills":[{"name":"a/b","instructions":"i","x":1},{"name":"c/d","instructions":"i","resources":[{"relPath":"./r.md","content":""}]}],"mcpServers":[{"id":"srv","command":"npx","args":[1]}]}`
	_, diags := mustParse(t, body)
	want := []spec.Diagnostic{
		{Kind: "skill", Name: "b", Field: "skills[0].x", Code: spec.CodeUnknownField},
		{Kind: "skill", Name: "d", Field: "skills[1].name", Code: spec.CodeNameChanged},
		{Kind: "resource", Name: "r.md", Field: "skills[1].resources[0].relPath", Code: spec.CodePathChanged},
		{Kind: "server", Name: "srv", Field: "mcpServers[0].args[0]", Code: spec.CodeNonStringEntry},
	}
	require.Len(t, diags, len(want), "Parse(%q) diagnostics: %+v", body, diags)
	for i := range want {
		diags[i].Message = ""
	}
	assert.Equal(t, want, diags, "Parse(%q) diagnostics", body)
}

func TestParseDoesNotAliasInput(t *testing.T) {
	t.Parallel()
	body := []byte(`{"harness":"claude","skills":[{"name":"s","instructions":"do","resources":[{"relPath":"a.md","content":"c"}]}],"mcpServers":[{"id":"a","command":"npx","env":{"K":"v"}}]}`)
	req, _, err := spec.Parse(body)
	require.NoError(t, err, "Parse(%q)", body)
	for i := range body {
		body[i] = 'X'
	}
	assert.Equal(t, "claude", req.Harness, "Harness after the body was overwritten")
	assert.Equal(t, "do", req.Skills[0].Instructions, "Instructions after the body was overwritten")
	assert.Equal(t, "c", req.Skills[0].Resources[0].Content, "Content after the body was overwritten")
	assert.Equal(t, []spec.Pair{{Name: "K", Value: "v"}}, req.Servers[0].Env, "Env after the body was overwritten")
}

// TestParseAccessFieldEmptiesRequest: an invalid field that narrows access must never end in
// an empty success. When it leaves no server and no skill, the whole request is refused with
// the field and its code; a drop for another reason, or anything left, keeps the render.
func TestParseAccessFieldEmptiesRequest(t *testing.T) {
	tests := []struct {
		name, body string
		field      string // "" = accepted
		code       string
	}{
		{"typo in credentials, nothing left", `{"mcpServers":[{"id":"a","command":"npx","credentials":"User"}]}`, "mcpServers[0].credentials", spec.CodeAccessFieldInvalid},
		{"enabled and disabled, nothing left", `{"mcpServers":[{"id":"a","command":"npx","enabled":true,"disabled":true}]}`, "mcpServers[0].disabled", spec.CodeEnabledAndDisabled},
		{"first access error named", `{"mcpServers":[{"id":"a","command":"npx","users":[""]},{"id":"b","command":"npx","scope":"x"}]}`, "mcpServers[0].users[0]", spec.CodeAccessFieldInvalid},
		{"another server left", `{"mcpServers":[{"id":"a","command":"npx","credentials":"User"},{"id":"b","command":"npx"}]}`, "", ""},
		{"a skill left", `{"skills":[{"name":"s","description":"d","instructions":"i"}],"mcpServers":[{"id":"a","command":"npx","credentials":"User"}]}`, "", ""},
		{"dropped for another reason", `{"mcpServers":[{"id":"a","command":" npx"}]}`, "", ""},
		{"empty request", `{}`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _, err := spec.Parse([]byte(tc.body))
			if tc.field == "" {
				require.NoError(t, err, "Parse(%s)", tc.body)
				require.NotNil(t, req)
				return
			}
			var re *spec.RejectError
			require.ErrorAs(t, err, &re, "Parse(%s) must refuse the request", tc.body)
			assert.Equal(t, tc.field, re.Field, "refused field")
			assert.Equal(t, tc.code, re.Code, "refusal code")
			assert.Contains(t, re.Message, "nothing else is left to render", "the message says why the whole request is refused")
		})
	}
}

// TestParseBuiltinTools: run.builtinTools pre-approves the harness's own tools, so only a list
// of distinct plain tool names is read; anything else refuses the request, naming the entry.
func TestParseBuiltinTools(t *testing.T) {
	t.Parallel()
	req, diags := mustParse(t, `{"run":{"builtinTools":["Read","Edit","run_shell_command"]}}`)
	assert.Equal(t, []string{"Read", "Edit", "run_shell_command"}, req.Run.BuiltinTools, "the listed tools, in order")
	assert.Empty(t, diags, "a valid list is no diagnostic")
	req, _ = mustParse(t, `{"run":{"builtinTools":null}}`)
	assert.Empty(t, req.Run.BuiltinTools, "null grants none")
	req, _ = mustParse(t, `{"run":{}}`)
	assert.Empty(t, req.Run.BuiltinTools, "absent grants none")

	refused := []struct{ body, field string }{
		{`{"run":{"builtinTools":"Bash"}}`, "run.builtinTools"},
		{`{"run":{"builtinTools":{"Bash":true}}}`, "run.builtinTools"},
		{`{"run":{"builtinTools":["Read",1]}}`, "run.builtinTools[1]"},
		{`{"run":{"builtinTools":["Bash(git status:*)"]}}`, "run.builtinTools[0]"},
		{`{"run":{"builtinTools":["Read,Bash"]}}`, "run.builtinTools[0]"},
		{`{"run":{"builtinTools":["Read Bash"]}}`, "run.builtinTools[0]"},
		{`{"run":{"builtinTools":["-Bash"]}}`, "run.builtinTools[0]"},
		{`{"run":{"builtinTools":[""]}}`, "run.builtinTools[0]"},
		{`{"run":{"builtinTools":["Read","Read"]}}`, "run.builtinTools[1]"},
		{`{"run":{"builtinTools":["` + strings.Repeat("A", 65) + `"]}}`, "run.builtinTools[0]"},
	}
	for _, tc := range refused {
		_, _, err := spec.Parse([]byte(tc.body))
		var re *spec.RejectError
		require.ErrorAs(t, err, &re, "Parse(%s) must refuse the request", tc.body)
		assert.Equal(t, spec.CodeInvalidBuiltinTools, re.Code, "Parse(%s) code", tc.body)
		assert.Equal(t, tc.field, re.Field, "Parse(%s) field", tc.body)
		assert.Contains(t, re.Message, tc.field, "Parse(%s) message names the field", tc.body)
	}
}
