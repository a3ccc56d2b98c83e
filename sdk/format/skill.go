package format

import (
	"strings"
	"unicode"
)

// Limits of the portable skill rule (the Agent Skills rule every harness in docs/FORMATS.md §1.4
// honours): a lowercase hyphenated name of at most 64 characters that equals the skill's
// directory, and a non-empty one-line description of at most 1024 characters.
const (
	MaxSkillName        = 64
	MaxSkillDescription = 1024
)

// FallbackSkillName is the name used when nothing of a name survives SkillName.
const FallbackSkillName = "skill"

// IsSkillName reports whether name satisfies the portable rule ^[a-z0-9]+(-[a-z0-9]+)*$ with at
// most MaxSkillName characters.
func IsSkillName(name string) bool {
	if name == "" || len(name) > MaxSkillName || name[0] == '-' || name[len(name)-1] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if name[i-1] == '-' {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// SkillName maps name to a name that satisfies IsSkillName, deterministically: ASCII letters
// are lowercased, every run of other characters becomes one "-", edge hyphens are trimmed, the
// result is cut to MaxSkillName characters, and an empty result becomes FallbackSkillName. A
// name that already conforms is returned unchanged.
func SkillName(name string) string {
	if IsSkillName(name) {
		return name
	}
	var sb strings.Builder
	dash := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			dash = false
			sb.WriteByte(c)
			continue
		}
		dash = true
	}
	out := sb.String()
	if len(out) > MaxSkillName {
		out = strings.TrimRight(out[:MaxSkillName], "-")
	}
	if out == "" {
		return FallbackSkillName
	}
	return out
}

// SkillNames maps names (in order) to distinct conforming names, deterministically. A name that
// already conforms keeps it; the others go through SkillName, and a result that is already taken
// gets the first free suffix "-2", "-3", … (the stem cut so the whole stays within
// MaxSkillName). Names are compared exactly: the host has already de-duplicated them
// case-insensitively.
func SkillNames(names []string) []string {
	out := make([]string, len(names))
	taken := make(map[string]bool, len(names))
	for i, n := range names {
		if IsSkillName(n) && !taken[n] {
			out[i] = n
			taken[n] = true
		}
	}
	for i, n := range names {
		if out[i] != "" {
			continue
		}
		base := SkillName(n)
		name := base
		for k := 2; taken[name]; k++ {
			suffix := "-" + itoa(k)
			stem := base
			if len(stem)+len(suffix) > MaxSkillName {
				stem = strings.TrimRight(stem[:MaxSkillName-len(suffix)], "-")
			}
			name = stem + suffix
		}
		out[i] = name
		taken[name] = true
	}
	return out
}

func itoa(n int) string {
	var buf [20]byte
	i := len(buf)
	for n >= 10 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	buf[i] = byte('0' + n)
	return string(buf[i:])
}

// SkillDescription returns desc as one line that satisfies the portable rule's shape: every
// control or line-breaking character (including U+0085, U+2028 and U+2029) becomes a space,
// surrounding spaces are trimmed, and the result is cut to MaxSkillDescription characters.
// changed reports whether the result differs from desc. An empty result is left for the caller
// to replace (see GeneratedSkillDescription).
func SkillDescription(desc string) (out string, changed bool) {
	if isCleanLine(desc) {
		return desc, false
	}
	return rebuildDescription(desc)
}

// rebuildDescription is SkillDescription rune by rune.
func rebuildDescription(desc string) (out string, changed bool) {
	var sb strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(desc, "\uFFFD") {
		if n == MaxSkillDescription {
			break
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		sb.WriteRune(r)
		n++
	}
	out = strings.TrimSpace(sb.String())
	return out, out != desc
}

// isCleanLine reports whether SkillDescription leaves desc as it is because it is already one
// line of printable ASCII, at most MaxSkillDescription long, with no surrounding space: the
// common case, checked without building a copy.
func isCleanLine(desc string) bool {
	if len(desc) > MaxSkillDescription || desc == "" || desc[0] == ' ' || desc[len(desc)-1] == ' ' {
		return false
	}
	for i := 0; i < len(desc); i++ {
		if c := desc[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// GeneratedSkillDescription is the description given to a skill that has none, so that
// harnesses which skip description-less skills still load it.
func GeneratedSkillDescription(name string) string {
	return "Instructions for " + name + ". Use when a task calls for the " + name + " skill."
}
