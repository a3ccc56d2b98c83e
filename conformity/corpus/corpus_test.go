package corpus_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/conformity/corpus"
)

const casesDir = "../testdata/cases"

func TestLoadCorpus(t *testing.T) {
	t.Parallel()
	cases, err := corpus.Load(casesDir)
	require.NoError(t, err, "Load(%q)", casesDir)
	require.NotEmpty(t, cases, "Load(%q) found no case", casesDir)
	for i := 1; i < len(cases); i++ {
		assert.Less(t, cases[i-1].File, cases[i].File, "Load(%q) order at %d", casesDir, i)
	}
	byName := map[string]corpus.Case{}
	for _, c := range cases {
		byName[c.Name] = c
		if c.Input != nil {
			assert.True(t, json.Valid(c.Body()), "case %s: Body() of an input case is not JSON", c.File)
		}
		assert.NotNil(t, c.Context.HostEnv, "case %s: HostEnv", c.File)
		assert.NotNil(t, c.Context.Tokens, "case %s: Tokens", c.File)
		assert.NotNil(t, c.Expect.Resources, "case %s: Resources", c.File)
	}

	raw := byName["json-duplicate-member"]
	assert.Nil(t, raw.Input, "json-duplicate-member: Input")
	assert.Equal(t, `{"mcpServers":[{"id":"a","command":"safe-cmd","command":"evil-cmd"}]}`, string(raw.Body()),
		"json-duplicate-member: Body()")
	assert.True(t, raw.Expect.Rejected, "json-duplicate-member: Rejected")

	val := byName["skill-name-plain"]
	require.NotNil(t, val.Input, "skill-name-plain: Input")
	assert.JSONEq(t, `{"skills":[{"name":"deploy","instructions":"Do the thing."}],"mcpServers":[]}`, string(val.Body()),
		"skill-name-plain: Body()")
	assert.Equal(t, []string{"deploy"}, val.Expect.Skills, "skill-name-plain: Skills")
	assert.False(t, val.Expect.ArgToolRules.Present, "skill-name-plain: claudeMcpAllowRules is absent")
	assert.Nil(t, val.Expect.TOMLServers, "skill-name-plain: codexServers is absent")

	omitted := byName["claude-tools-omitted-when-unrestricted"]
	assert.Equal(t, corpus.AllowRules{Present: true, Null: true}, omitted.Expect.ArgToolRules,
		"claude-tools-omitted-when-unrestricted: null claudeMcpAllowRules")
	empty := byName["claude-tools-empty-array-restricts"]
	assert.True(t, empty.Expect.ArgToolRules.Present && !empty.Expect.ArgToolRules.Null,
		"claude-tools-empty-array-restricts: a list claudeMcpAllowRules")
}

func TestAllowRulesStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want corpus.AllowRules
	}{
		{"absent", `{}`, corpus.AllowRules{}},
		{"null", `{"claudeMcpAllowRules":null}`, corpus.AllowRules{Present: true, Null: true}},
		{"empty list", `{"claudeMcpAllowRules":[]}`, corpus.AllowRules{Present: true, Rules: []string{}}},
		{"list", `{"claudeMcpAllowRules":["mcp__a","mcp__b__x"]}`, corpus.AllowRules{Present: true, Rules: []string{"mcp__a", "mcp__b__x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e corpus.Expect
			require.NoError(t, json.Unmarshal([]byte(tc.json), &e), "json.Unmarshal(%s)", tc.json)
			assert.Equal(t, tc.want, e.ArgToolRules, "json.Unmarshal(%s) claudeMcpAllowRules", tc.json)
			if tc.want.Present {
				b, err := json.Marshal(e.ArgToolRules)
				require.NoError(t, err, "json.Marshal(%+v)", e.ArgToolRules)
				assert.JSONEq(t, tc.json[len(`{"claudeMcpAllowRules":`):len(tc.json)-1], string(b), "json.Marshal(%+v)", e.ArgToolRules)
			}
		})
	}
	var e corpus.Expect
	assert.Error(t, json.Unmarshal([]byte(`{"claudeMcpAllowRules":"mcp__a"}`), &e), "json.Unmarshal of a string claudeMcpAllowRules")
}

func TestLoadIsStrict(t *testing.T) {
	t.Parallel()
	const good = `{"name":"x","area":"url","description":"d","input":{},"expect":{"servers":[],"skills":[],"resources":{},"redact":[]}}`
	tests := []struct {
		name string
		file string
		body string
		ok   bool
	}{
		{"valid", "001-x.json", good, true},
		{"valid raw", "001-x.json", `{"name":"x","area":"json-decoding","description":"d","inputRaw":"{}","expect":{"servers":[],"skills":[],"resources":{},"redact":[],"rejected":true}}`, true},
		{"name differs from file", "001-y.json", good, false},
		{"bad file name", "1-x.json", good, false},
		{"unknown field", "001-x.json", `{"name":"x","area":"url","description":"d","input":{},"extra":1,"expect":{"servers":[],"skills":[],"resources":{},"redact":[]}}`, false},
		{"unknown expect field", "001-x.json", `{"name":"x","area":"url","description":"d","input":{},"expect":{"servers":[],"skills":[],"resources":{},"redact":[],"serverz":[]}}`, false},
		{"missing expect field", "001-x.json", `{"name":"x","area":"url","description":"d","input":{},"expect":{"servers":[],"skills":[],"resources":{}}}`, false},
		{"both inputs", "001-x.json", `{"name":"x","area":"url","description":"d","input":{},"inputRaw":"{}","expect":{"servers":[],"skills":[],"resources":{},"redact":[]}}`, false},
		{"no input", "001-x.json", `{"name":"x","area":"url","description":"d","expect":{"servers":[],"skills":[],"resources":{},"redact":[]}}`, false},
		{"trailing data", "001-x.json", good + `{}`, false},
		{"bad area", "001-x.json", `{"name":"x","area":"URL area","description":"d","input":{},"expect":{"servers":[],"skills":[],"resources":{},"redact":[]}}`, false},
		{"not JSON", "001-x.json", `{`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.body), 0o644), "write the case file")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a case"), 0o644), "write a non-case file")
			cases, err := corpus.Load(dir)
			if tc.ok {
				require.NoError(t, err, "Load of %s %s", tc.file, tc.body)
				require.Len(t, cases, 1, "Load of %s", tc.file)
				assert.Equal(t, tc.file, cases[0].File, "Load of %s: File", tc.file)
				return
			}
			assert.Error(t, err, "Load of %s %s, want an error", tc.file, tc.body)
		})
	}
}

func TestLoadMissingDir(t *testing.T) {
	t.Parallel()
	_, err := corpus.Load(filepath.Join(t.TempDir(), "nope"))
	assert.ErrorIs(t, err, os.ErrNotExist, "Load of a missing directory")
}
