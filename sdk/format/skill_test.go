package format

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSkillName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 70)
	tests := []struct{ in, want string }{
		{"repo-review", "repo-review"},
		{"My_Skill", "my-skill"},
		{"a..b", "a-b"},
		{"-x-", "x"},
		{"a.b_c-D", "a-b-c-d"},
		{"___", "skill"},
		{"", "skill"},
		{long, long[:64]},
		{strings.Repeat("a", 63) + "_b", strings.Repeat("a", 63)},
		{"x--y", "x-y"},
	}
	for _, tc := range tests {
		got := SkillName(tc.in)
		assert.Equal(t, tc.want, got, "SkillName(%q)", tc.in)
		assert.True(t, IsSkillName(got), "SkillName(%q) = %q must conform", tc.in, got)
	}
}

func TestIsSkillName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"a": true, "a-b": true, "a1-2b": true, "": false, "-a": false, "a-": false, "a--b": false,
		"A": false, "a_b": false, "a.b": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
	} {
		assert.Equal(t, want, IsSkillName(name), "IsSkillName(%q)", name)
	}
}

func TestSkillNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 64)
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"conforming kept", []string{"a", "b"}, []string{"a", "b"}},
		{"renamed after a conforming later name", []string{"My_Skill", "my-skill"}, []string{"my-skill-2", "my-skill"}},
		{"two renamed collide", []string{"A_b", "a.b", "skill", "..."}, []string{"a-b", "a-b-2", "skill", "skill-2"}},
		{"suffix keeps the length", []string{long, long + "_"}, []string{long, long[:62] + "-2"}},
	}
	for _, tc := range tests {
		got := SkillNames(tc.in)
		assert.Equal(t, tc.want, got, "SkillNames(%q) (%s)", tc.in, tc.name)
		for _, n := range got {
			assert.True(t, IsSkillName(n), "SkillNames(%q) gave %q, which does not conform", tc.in, n)
		}
	}
}

func TestSkillDescription(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 1100)
	tests := []struct {
		in, want string
		changed  bool
	}{
		{"Reviews code.", "Reviews code.", false},
		{"a\nb\u2028c\u0085d\te", "a b c d e", true},
		{"  padded ", "padded", true},
		{long, long[:2*1024], true},
		{"", "", false},
		{"\n", "", true},
	}
	for _, tc := range tests {
		got, changed := SkillDescription(tc.in)
		assert.Equal(t, tc.want, got, "SkillDescription(%q)", tc.in)
		assert.Equal(t, tc.changed, changed, "SkillDescription(%q) changed", tc.in)
		assert.LessOrEqual(t, utf8.RuneCountInString(got), MaxSkillDescription, "SkillDescription(%q) length", tc.in)
	}
}

func FuzzSkillName(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SkillName(in)
		assert.True(t, IsSkillName(got), "SkillName(%q) = %q must conform", in, got)
		assert.Equal(t, got, SkillName(got), "SkillName must be idempotent on %q", in)
	})
}

// FuzzSkillDescriptionFastPath checks that every description the fast path keeps is one the
// rune-by-rune rebuild would keep too.
func FuzzSkillDescriptionFastPath(f *testing.F) {
	for _, s := range []string{"Reviews code", " padded ", "tab\there", "caf\u00e9", "", "x\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		if !isCleanLine(desc) {
			return
		}
		out, changed := rebuildDescription(desc)
		if out != desc || changed {
			t.Fatalf("isCleanLine(%q) but the rebuild gives %q, changed %v", desc, out, changed)
		}
	})
}
