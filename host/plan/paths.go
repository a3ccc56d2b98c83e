package plan

import (
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Path limits (docs/SECURITY.md R8).
const (
	maxPathBytes    = 1024
	maxPathSegments = 16
	maxSegmentBytes = 255
)

// CheckoutContextDir is the one hidden directory a plan may write in the checkout: the
// materialized skill context, which the plan git-excludes.
const CheckoutContextDir = ".cat-context"

// allowedHidden returns the hidden first segments allowed under root.
func allowedHidden(root string) map[string]bool {
	if root == abi.RootCheckout {
		return map[string]bool{CheckoutContextDir: true}
	}
	return nil
}

// hiddenUnder returns the hidden first segments h allows under root: the checkout's context
// directory, and under the config root the profile's hiddenDirs.
func (h *harness) hiddenUnder(root string) map[string]bool {
	if root == abi.RootConfig && len(h.hiddenDirs) > 0 {
		return h.hiddenDirs
	}
	return allowedHidden(root)
}

// windowsDevice reports whether seg names a Windows device (CON, NUL, COM1, … with any
// extension), which no portable path may contain.
func windowsDevice(seg string) bool {
	stem, _, _ := strings.Cut(strings.ToUpper(seg), ".")
	stem = strings.TrimRight(stem, " ")
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) &&
		(stem[3] >= '0' && stem[3] <= '9') {
		return true
	}
	return false
}

// pathProblem returns why p is not an acceptable plan path, or "" when it is: a relative,
// slash-separated, already clean, portable path of at most 16 segments and 1024 bytes, with no
// `\`, `:`, control or format characters, no empty, `.`, `..`, `.git` or hidden segment (except
// a first segment listed in hidden), no Windows device name, no segment starting with `-` or
// ending with `.` or a space.
func pathProblem(p string, hidden map[string]bool) string {
	switch {
	case p == "":
		return "empty"
	case len(p) > maxPathBytes:
		return "longer than 1024 bytes"
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	case strings.ContainsRune(p, 0):
		return "holds a NUL byte"
	case strings.Contains(p, `\`):
		return `holds a backslash`
	case strings.Contains(p, ":"):
		return "holds a colon (drive or stream name)"
	case strings.HasPrefix(p, "/"):
		return "absolute"
	case strings.Contains(p, abi.PlaceholderPrefix):
		return "holds a placeholder"
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return "holds a control or format character"
		}
	}
	if !filepath.IsLocal(p) {
		return "not local"
	}
	if path.Clean(p) != p {
		return "not clean"
	}
	segs := strings.Split(p, "/")
	if len(segs) > maxPathSegments {
		return "more than 16 segments"
	}
	for i, s := range segs {
		switch {
		case s == "" || s == "." || s == "..":
			return "empty, . or .. segment"
		case strings.EqualFold(s, ".git"):
			return ".git segment"
		case len(s) > maxSegmentBytes:
			return "segment longer than 255 bytes"
		case strings.HasPrefix(s, ".") && !(i == 0 && hidden[s]):
			return "hidden segment " + s
		case strings.HasPrefix(s, "-"):
			return "segment starts with -"
		case strings.HasSuffix(s, ".") || strings.HasSuffix(s, " ") || strings.HasPrefix(s, " "):
			return "segment starts with a space or ends with . or a space"
		case windowsDevice(s):
			return "Windows device name " + s
		}
	}
	return ""
}

// ValidPath reports whether p is a path Check accepts under root (before the harness's own
// path table applies). It is the predicate FuzzCheck holds Check to.
func ValidPath(root, p string) bool { return pathProblem(p, allowedHidden(root)) == "" }
