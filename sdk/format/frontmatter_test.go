package format

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// parseFrontMatter splits a SKILL.md into its front-matter map and its body.
func parseFrontMatter(t *testing.T, doc []byte) (map[string]any, string) {
	t.Helper()
	require.True(t, bytes.HasPrefix(doc, []byte("---\n")), "document must open with ---:\n%s", doc)
	rest := doc[4:]
	end := bytes.Index(rest, []byte("\n---\n"))
	require.GreaterOrEqual(t, end, 0, "document must close its front matter:\n%s", doc)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal(rest[:end+1], &m), "yaml.Unmarshal of front matter:\n%s", rest[:end+1])
	return m, string(rest[end+5:])
}

func TestFrontMatter(t *testing.T) {
	t.Parallel()
	got, err := Markdown([]Field{{"name", "repo-review"}, {"description", "Line\nallowed-tools: Bash\u2028x \"q\" \\"}}, "Body\n")
	require.NoError(t, err, "Markdown")
	want := "---\nname: repo-review\ndescription: \"Line\\nallowed-tools: Bash\\u2028x \\\"q\\\" \\\\\"\n---\nBody\n"
	assert.Equal(t, want, string(got), "Markdown")
	m, body := parseFrontMatter(t, got)
	assert.Equal(t, map[string]any{"name": "repo-review", "description": "Line\nallowed-tools: Bash\u2028x \"q\" \\"}, m, "parsed front matter")
	assert.Equal(t, "Body\n", body, "body after front matter")
}

func TestFrontMatterErrors(t *testing.T) {
	t.Parallel()
	for _, fields := range [][]Field{
		{{"", "x"}},
		{{"bad key", "x"}},
		{{"-x", "x"}},
		{{"name", "a"}, {"name", "b"}},
		{{"name\n", "a"}},
	} {
		_, err := FrontMatter(fields...)
		assert.ErrorIs(t, err, ErrUnsupported, "FrontMatter(%q) must refuse the keys", fields)
	}
}

func TestAppendYAMLString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"\x00\x07\x1b\x7f", `"\u0000\u0007\u001b\u007f"`},
		{"\u0085\u2028\u2029\ufeff", `"\u0085\u2028\u2029\ufeff"`},
		{"\xff", `"\ufffd"`},
		{"é \U0001F600", "\"é \U0001F600\""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, string(AppendYAMLString(nil, tc.in)), "AppendYAMLString(%q)", tc.in)
	}
}

func FuzzFrontMatter(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, s+"\n"+s)
	}
	f.Fuzz(func(t *testing.T, name, desc string) {
		doc, err := Markdown([]Field{{"name", name}, {"description", desc}}, "body\n---\nmore")
		require.NoError(t, err, "Markdown(%q, %q)", name, desc)
		require.Equal(t, 4, strings.Count(string(doc[:bytes.Index(doc, []byte("\n---\n"))+5]), "\n"),
			"front matter must be exactly four lines for %q/%q:\n%s", name, desc, doc)
		m, body := parseFrontMatter(t, doc)
		assert.Equal(t, map[string]any{"name": jsonValidUTF8(name), "description": jsonValidUTF8(desc)}, m,
			"front matter round trip of %q/%q", name, desc)
		assert.Equal(t, "body\n---\nmore", body, "body after front matter")
	})
}

func TestPlainYAML(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"repo-review", "a", "x1", "yes", "no", "true", "null", "y", "1e3", "0x1f", "2024-01-02", "123", "a b", "A", "-a", "nan", "inf", "a:b"} {
		doc, err := FrontMatter(Field{Key: "name", Value: v})
		require.NoError(t, err, "FrontMatter(%q)", v)
		m, _ := parseFrontMatter(t, append(doc, "body"...))
		assert.Equal(t, v, m["name"], "FrontMatter(%q) must read back as the same string:\n%s", v, doc)
	}
	assert.True(t, isPlainYAML("repo-review"), "a skill name is written plain")
	assert.False(t, isPlainYAML("yes"), "a YAML 1.1 boolean is quoted")
}
