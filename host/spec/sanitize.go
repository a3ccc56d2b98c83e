package spec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the skill and resource rules (docs/SECURITY.md §1, R7, R8, R9).
const (
	// FallbackSkillName replaces a skill name with nothing usable left.
	FallbackSkillName = "skill"
	// MaxSkillNameChars is the length a skill name is cut to (R7).
	MaxSkillNameChars = 64
	// MaxDescriptionChars is the number of characters a description is cut to (R9).
	MaxDescriptionChars = 1024
	// MaxSegmentBytes is the longest relPath segment kept (R8, NAME_MAX).
	MaxSegmentBytes = 255
	// MaxPathSegments is the deepest relPath kept (R8).
	MaxPathSegments = 16
	// MaxPathBytes is the longest sanitized relPath kept (R8).
	MaxPathBytes = 1024
	// MaxResources is the number of resources a skill keeps at most (R8).
	MaxResources = 256
	// MaxResourceBytes caps one resource's content (R8): a larger resource is dropped. Skill
	// resources are templates, scripts and reference notes; 1 MiB is far above any of them
	// and keeps a request's rendered tree within what a config home should hold.
	MaxResourceBytes = 1 << 20
	// MaxSkillResourceBytes caps the total content of one skill's kept resources (R8): a
	// resource that would take the skill past it is dropped.
	MaxSkillResourceBytes = 8 << 20
)

// skillMD is the generated file at a skill's root; resources may not claim it (R8).
const skillMD = "SKILL.md"

// allowedNameByte reports whether c survives stripping: [A-Za-z0-9._-].
func allowedNameByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		c == '.' || c == '_' || c == '-'
}

// sanitizeSkillName applies the base name rule and R7: "\" counts as "/", only the last
// segment is kept, characters outside [A-Za-z0-9._-] are stripped, leading "-" and trailing
// "." are trimmed, the name is cut to MaxSkillNameChars; an empty name, one starting with "."
// or a Windows device name becomes FallbackSkillName. fallback reports that last case.
func sanitizeSkillName(raw string) (name string, fallback bool) {
	last := raw
	if i := strings.LastIndexAny(raw, `/\`); i >= 0 {
		last = raw[i+1:]
	}
	clean := true
	for i := 0; i < len(last); i++ {
		if !allowedNameByte(last[i]) {
			clean = false
			break
		}
	}
	if !clean {
		b := make([]byte, 0, len(last))
		for i := 0; i < len(last); i++ {
			if allowedNameByte(last[i]) {
				b = append(b, last[i])
			}
		}
		last = string(b)
	}
	last = strings.TrimLeft(last, "-")
	last = strings.TrimRight(last, ".")
	if len(last) > MaxSkillNameChars {
		last = strings.TrimRight(last[:MaxSkillNameChars], ".")
	}
	if last == "" || last[0] == '.' || isDeviceName(last) {
		return FallbackSkillName, true
	}
	return last, false
}

// deviceNames are the Windows reserved device names; COM and LPT take one digit 0-9.
var deviceNames = [...]string{"con", "prn", "aux", "nul"}

// isDeviceName reports whether seg, up to its first ".", is a Windows device name in any case
// (CON, nul.txt, Com1.tar.gz).
func isDeviceName(seg string) bool {
	base := seg
	if i := strings.IndexByte(seg, '.'); i >= 0 {
		base = seg[:i]
	}
	switch len(base) {
	case 3:
		for _, d := range deviceNames {
			if strings.EqualFold(base, d) {
				return true
			}
		}
	case 4:
		if base[3] >= '0' && base[3] <= '9' &&
			(strings.EqualFold(base[:3], "com") || strings.EqualFold(base[:3], "lpt")) {
			return true
		}
	}
	return false
}

// isDescriptionBreak reports whether r becomes a space in a description (R9): every control
// character (C0, DEL, C1 including U+0085) and the Unicode line and paragraph separators.
func isDescriptionBreak(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// sanitizeDescription applies R9: line breaks and control characters become spaces and the
// result is cut to MaxDescriptionChars characters. changed reports a difference from s.
func sanitizeDescription(s string) (out string, changed bool) {
	n := 0
	needs := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				needs = true
			}
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			if isDescriptionBreak(r) {
				needs = true
			}
			i += size
		}
		n++
		if n > MaxDescriptionChars {
			needs = true
			break
		}
	}
	if !needs {
		return s, false
	}
	var b strings.Builder
	b.Grow(min(len(s), 4*MaxDescriptionChars))
	n = 0
	for _, r := range s {
		if n == MaxDescriptionChars {
			break
		}
		if isDescriptionBreak(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String(), true
}

// relPathProblem is why a relPath is dropped: a Diagnostic code and its message.
type relPathProblem struct {
	code string
	msg  string
}

// sanitizeRelPath applies the base relPath rule and R8 to raw. It returns the sanitized path,
// or the problem that drops the resource. Uniqueness, conflicts and caps are
// the caller's (they depend on the other resources of the skill).
func sanitizeRelPath(raw string) (string, *relPathProblem) {
	// Any ".." segment drops the resource, whatever else is wrong with it.
	segs := 0
	clean := true // raw is already its own sanitized form
	start := 0
	for i := 0; i <= len(raw); i++ {
		if i < len(raw) && raw[i] != '/' && raw[i] != '\\' {
			if !allowedNameByte(raw[i]) {
				clean = false
			}
			continue
		}
		if i < len(raw) && raw[i] == '\\' {
			clean = false
		}
		seg := raw[start:i]
		start = i + 1
		switch seg {
		case "..":
			return "", &relPathProblem{CodePathTraversal, `relPath has a ".." segment`}
		case "", ".":
			clean = false
			continue
		}
		segs++
	}
	if segs == 0 {
		return "", &relPathProblem{CodeInvalidPath, "relPath has no segment"}
	}
	if segs > MaxPathSegments {
		return "", &relPathProblem{CodeTooManySegments, "relPath is deeper than the limit of 16 segments"}
	}
	var out string
	if clean {
		out = raw
	} else {
		b := make([]byte, 0, len(raw))
		start = 0
		for i := 0; i <= len(raw); i++ {
			if i < len(raw) && raw[i] != '/' && raw[i] != '\\' {
				continue
			}
			seg := raw[start:i]
			start = i + 1
			if seg == "" || seg == "." {
				continue
			}
			if len(b) > 0 {
				b = append(b, '/')
			}
			mark := len(b)
			for j := 0; j < len(seg); j++ {
				if allowedNameByte(seg[j]) {
					b = append(b, seg[j])
				}
			}
			if len(b) == mark {
				return "", &relPathProblem{CodeInvalidSegment, "a relPath segment has no allowed character"}
			}
		}
		out = string(b)
	}
	if len(out) > MaxPathBytes {
		return "", &relPathProblem{CodePathTooLong, "relPath is longer than the limit of 1024 bytes"}
	}
	first := true
	for rest := out; ; first = false {
		seg, tail, more := strings.Cut(rest, "/")
		if p := segmentProblem(seg); p != nil {
			return "", p
		}
		if strings.EqualFold(seg, skillMD) {
			switch {
			case first && !more:
				return "", &relPathProblem{CodeReservedPath, "SKILL.md at the skill root is the generated file"}
			case more:
				return "", &relPathProblem{CodeReservedPath, "relPath lies below a directory named SKILL.md"}
			}
			// Codex discovers skills recursively and loads a nested SKILL.md as a skill of its
			// own, with a name, description and body no policy has seen.
			return "", &relPathProblem{CodeReservedPath, "SKILL.md is reserved at every depth: a harness that discovers skills recursively would load it as another skill"}
		}
		if !more {
			break
		}
		rest = tail
	}
	return out, nil
}

// segmentProblem checks one stripped relPath segment.
func segmentProblem(seg string) *relPathProblem {
	switch {
	case seg == "" || seg[0] == '.':
		return &relPathProblem{CodeInvalidSegment, `a relPath segment is empty, "." or ".." or starts with "." once stripped`}
	case seg[0] == '-':
		return &relPathProblem{CodeLeadingDash, `a relPath segment starts with "-"`}
	case seg[len(seg)-1] == '.':
		return &relPathProblem{CodeTrailingDot, `a relPath segment ends with "."`}
	case len(seg) > MaxSegmentBytes:
		return &relPathProblem{CodeSegmentTooLong, "a relPath segment is longer than the limit of 255 bytes"}
	case isDeviceName(seg):
		return &relPathProblem{CodeDeviceName, "a relPath segment is a Windows device name"}
	}
	return nil
}

// OneLine is s as a description keeps it (R9): line breaks and control characters become
// spaces, cut to MaxDescriptionChars characters. The host uses it for request text it puts in
// the agent's prompt.
func OneLine(s string) string {
	out, _ := sanitizeDescription(s)
	return out
}
