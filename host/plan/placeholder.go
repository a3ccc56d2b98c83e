package plan

import (
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Placeholder kinds, the middle part of {{loadout.KIND.ID}}.
const (
	KindSecret = "secret"
	KindRoot   = "root"
	KindBlob   = "blob"
)

// maxPlaceholderLen bounds how far past "{{loadout." a placeholder's closing "}}" may be.
const maxPlaceholderLen = 96

// Occurrence is one placeholder found in a string.
type Occurrence struct {
	Start, End int    // byte range of the whole placeholder in the scanned string
	Text       string // the placeholder, e.g. {{loadout.secret.1}}
	Kind       string // KindSecret, KindRoot or KindBlob; empty when malformed
	ID         string // the part after the kind
}

// Scan returns every occurrence of abi.PlaceholderPrefix in s, in order. An occurrence that is
// not a well-formed {{loadout.KIND.ID}} (KIND one of secret, root, blob; ID of [A-Za-z0-9_-])
// has an empty Kind and a Text running to the end of what could be read. Scan is single-pass:
// occurrences never overlap.
func Scan(s string) []Occurrence {
	var out []Occurrence
	i := 0
	for {
		j := strings.Index(s[i:], abi.PlaceholderPrefix)
		if j < 0 {
			return out
		}
		start := i + j
		rest := s[start+len(abi.PlaceholderPrefix):]
		limit := min(len(rest), maxPlaceholderLen)
		end := strings.Index(rest[:limit], "}}")
		if end < 0 {
			out = append(out, Occurrence{Start: start, End: start + len(abi.PlaceholderPrefix), Text: s[start : start+len(abi.PlaceholderPrefix)]})
			i = start + len(abi.PlaceholderPrefix)
			continue
		}
		inner := rest[:end]
		stop := start + len(abi.PlaceholderPrefix) + end + 2
		occ := Occurrence{Start: start, End: stop, Text: s[start:stop]}
		if kind, id, ok := strings.Cut(inner, "."); ok && validPlaceholderID(id) &&
			(kind == KindSecret || kind == KindRoot || kind == KindBlob) {
			occ.Kind, occ.ID = kind, id
		}
		out = append(out, occ)
		i = stop
	}
}

func validPlaceholderID(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// RootPlaceholder returns the placeholder of root name, e.g. {{loadout.root.config}}.
func RootPlaceholder(name string) string { return abi.PlaceholderPrefix + KindRoot + "." + name + "}}" }
