// Package doccheck keeps the repository's cross-references true: every relative Markdown link
// resolves to a file or directory of the tree (and, with a #fragment, to one of its headings),
// and every section reference such as "docs/FORMATS.md §2.1" names an existing file with a
// heading numbered 2.1.
//
// # Heading convention
//
// A numbered section's heading starts with its number: "## 3. Title" for a section,
// "### 3.1 Title" for a subsection (a trailing dot is optional after a dotted number). A
// reference "§3" or "§3.1" names that heading. A heading spelled "## §3 Title" is reported,
// so that one convention holds everywhere.
//
// # What is read
//
//   - In a .md file: inline links and images [text](target), reference definitions
//     "[label]: target", and section references "NAME.md §N" (also "§N" alone, which names
//     a section of the same file). Fenced code blocks and code spans are skipped for links
//     but not for section references, which the project also writes in code spans.
//   - In a .go, .sh or .rego file: section references "NAME.md §N" (a comment line break
//     between the name and "§" is allowed), and a list after it ("§1.1, §2.1 and §3.3").
//     In their comments ("//" in Go, "#" in shell and Rego), every document mentioned by name
//     — an upper-case file name ending in .md, such as "docs/SPAWN-ENV.md" or "README.md" —
//     must exist too. SKILL.md is a name loadout writes, not a document of the tree, and is
//     left alone.
//
// A target or a file name resolves against the directory of the file that mentions it, then
// against the repository root. URLs with a scheme (https:, mailto:) are not checked.
//
// The package keeps no state; Check is safe to call from several goroutines.
package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is one broken reference.
type Problem struct {
	File string // slash-separated, relative to the root
	Line int    // 1-based
	Ref  string // the link target or section reference as written
	Msg  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Ref, p.Msg)
}

// Checked reports whether Check reads a file with this name.
func Checked(name string) bool {
	switch path.Ext(name) {
	case ".md", ".go", ".sh", ".rego":
		return true
	}
	return false
}

// Check reads each of files (slash-separated paths relative to root) that Checked accepts and
// returns every broken reference, sorted by file and line. An unreadable file is a Problem too.
func Check(root string, files []string) []Problem {
	c := &checker{root: root, docs: map[string]*doc{}}
	for _, f := range files {
		if Checked(f) {
			c.file(f)
		}
	}
	sort.SliceStable(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return c.problems
}

type checker struct {
	root     string
	docs     map[string]*doc // parsed Markdown files by slash path, nil when unreadable
	problems []Problem
}

// doc is what a Markdown file offers as a target: its numbered sections and heading anchors.
type doc struct {
	sections map[string]bool
	anchors  map[string]bool
}

func (c *checker) add(file string, line int, ref, format string, args ...any) {
	c.problems = append(c.problems, Problem{File: file, Line: line, Ref: ref, Msg: fmt.Sprintf(format, args...)})
}

var (
	// sectionRef is a file name followed by a section number, possibly across a comment line
	// break ("docs/FORMATS.md\n// §1.3"), and any further numbers of a list after it.
	sectionRef = regexp.MustCompile(`([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)(?:[ \t]|\n[ \t]*(?://|#|\*)?[ \t]*)+§([0-9]+(?:\.[0-9]+)*)((?:(?:,[ \t]*|[ \t]+and[ \t]+|[ \t]*(?:\n[ \t]*(?://|#|\*)?[ \t]*))§[0-9]+(?:\.[0-9]+)*)*)`)
	moreRefs   = regexp.MustCompile(`§([0-9]+(?:\.[0-9]+)*)`)
	// bareRef is a section reference without a file name: in Markdown, one of the same file.
	bareRef = regexp.MustCompile(`§([0-9]+(?:\.[0-9]+)*)`)
	// docName is a document mentioned by name: an upper-case .md file name, with its directory.
	docName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:[A-Za-z0-9_.-]+/)*[A-Z][A-Z0-9_-]*\.md)(?:$|[^A-Za-z0-9_/-])`)
	// inlineLink is [text](target) or ![alt](target); the target ends at whitespace or ")".
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	numbered   = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)*)(?:\.\s|\s)`)
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
)

func (c *checker) file(name string) {
	data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(name)))
	if err != nil {
		c.add(name, 0, name, "cannot read: %v", err)
		return
	}
	text := string(data)
	covered := c.sectionRefs(name, text)
	if path.Ext(name) != ".md" {
		c.docNames(name, text)
		return
	}
	if d := c.doc(name); d != nil {
		c.headingStyle(name, text)
	}
	c.links(name, text)
	c.bareRefs(name, text, covered)
}

// sectionRefs checks every "NAME.md §N" reference and returns the byte ranges of their section
// numbers, which bareRefs then leaves alone.
func (c *checker) sectionRefs(name, text string) [][2]int {
	var covered [][2]int
	for _, m := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
		file := text[m[2]:m[3]]
		line := 1 + strings.Count(text[:m[0]], "\n")
		nums := []string{text[m[4]:m[5]]}
		covered = append(covered, [2]int{m[4] - len("§"), m[5]})
		for _, mm := range moreRefs.FindAllStringSubmatchIndex(text[m[6]:m[7]], -1) {
			nums = append(nums, text[m[6]+mm[2]:m[6]+mm[3]])
			covered = append(covered, [2]int{m[6] + mm[0], m[6] + mm[1]})
		}
		target, ok := c.resolve(name, file)
		if !ok {
			c.add(name, line, file+" §"+nums[0], "no file %s in the tree (relative to %s or to the root)", file, path.Dir(name))
			continue
		}
		d := c.doc(target)
		if d == nil {
			c.add(name, line, file+" §"+nums[0], "%s is not a readable Markdown file", target)
			continue
		}
		for _, n := range nums {
			if !d.sections[n] {
				c.add(name, line, file+" §"+n, "%s has no heading numbered %s (%s)", target, n, headingFor(n))
			}
		}
	}
	return covered
}

// headingFor is the heading the convention wants for section n.
func headingFor(n string) string {
	if strings.Contains(n, ".") {
		return "### " + n + " Title"
	}
	return "## " + n + ". Title"
}

// docNames checks every document a code file's comments mention by name (a broken section
// reference is reported once, by sectionRefs, not again here).
func (c *checker) docNames(name, text string) {
	marker := "#"
	if path.Ext(name) == ".go" {
		marker = "//"
	}
	forEachLine(text, func(n int, line string, _ bool) {
		i := strings.Index(line, marker)
		if i < 0 {
			return
		}
		comment := line[i+len(marker):]
		for _, m := range docName.FindAllStringSubmatchIndex(comment, -1) {
			file := comment[m[2]:m[3]]
			if path.Base(file) == "SKILL.md" || strings.HasPrefix(strings.TrimLeft(comment[m[3]:], " \t"), "§") ||
				(m[3] == len(comment) && strings.HasPrefix(nextComment(text, n, marker), "§")) {
				continue
			}
			if _, ok := c.resolve(name, file); !ok {
				c.add(name, n, file, "no file %s in the tree (relative to %s or to the root)", file, path.Dir(name))
			}
		}
	})
}

// nextComment is the comment text of line n+1 (1-based n), trimmed, or "".
func nextComment(text string, n int, marker string) string {
	lines := strings.SplitN(text, "\n", n+2)
	if len(lines) < n+1 {
		return ""
	}
	l := strings.TrimSpace(lines[n])
	return strings.TrimSpace(strings.TrimPrefix(l, marker))
}

// bareRefs checks a Markdown file's "§N" references that name no file: they are its own.
func (c *checker) bareRefs(name, text string, covered [][2]int) {
	d := c.doc(name)
	if d == nil {
		return
	}
outer:
	for _, m := range bareRef.FindAllStringSubmatchIndex(text, -1) {
		for _, r := range covered {
			if m[0] >= r[0] && m[1] <= r[1] {
				continue outer
			}
		}
		start := strings.LastIndexByte(text[:m[0]], '\n') + 1
		if heading.MatchString(text[start:m[0]] + "x") {
			continue // a heading spelled "§N Title": headingStyle reports it
		}
		n := text[m[2]:m[3]]
		if !d.sections[n] {
			c.add(name, 1+strings.Count(text[:m[0]], "\n"), "§"+n, "this file has no heading numbered %s (%s)", n, headingFor(n))
		}
	}
}

// headingStyle reports numbered headings spelled "§N Title".
func (c *checker) headingStyle(name, text string) {
	forEachLine(text, func(n int, line string, inCode bool) {
		if inCode {
			return
		}
		if m := heading.FindStringSubmatch(line); m != nil && strings.HasPrefix(m[2], "§") {
			c.add(name, n, line, "a numbered heading is spelled \"N. Title\" (or \"N.M Title\"), not \"§N Title\"")
		}
	})
}

// links checks every relative link target of a Markdown file.
func (c *checker) links(name, text string) {
	forEachLine(text, func(n int, line string, inCode bool) {
		if inCode {
			return
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			c.target(name, n, m[1])
			return
		}
		line = codeSpan.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			c.target(name, n, m[1])
		}
	})
}

func (c *checker) target(name string, line int, t string) {
	if scheme.MatchString(t) {
		return
	}
	file, frag, _ := strings.Cut(t, "#")
	target := name
	if file != "" {
		var ok bool
		if target, ok = c.resolveLink(name, file); !ok {
			c.add(name, line, t, "no file or directory %s relative to %s", file, path.Dir(name))
			return
		}
	}
	if frag == "" {
		return
	}
	d := c.doc(target)
	if d == nil {
		c.add(name, line, t, "a #fragment needs a Markdown target")
		return
	}
	if !d.anchors[frag] {
		c.add(name, line, t, "%s has no heading with anchor #%s", target, frag)
	}
}

// resolveLink resolves a link target against the file's directory only, as a Markdown viewer
// does; it must stay inside the tree.
func (c *checker) resolveLink(from, file string) (string, bool) {
	p := path.Clean(path.Join(path.Dir(from), file))
	if strings.HasPrefix(file, "/") {
		p = path.Clean(strings.TrimPrefix(file, "/"))
	}
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p))); err != nil {
		return "", false
	}
	return p, true
}

// resolve finds a mentioned file relative to the mentioning file's directory, then to the root.
func (c *checker) resolve(from, file string) (string, bool) {
	for _, p := range []string{path.Join(path.Dir(from), file), path.Clean(file)} {
		if p == ".." || strings.HasPrefix(p, "../") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p))); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// doc parses a Markdown file's headings once; nil when it cannot be read.
func (c *checker) doc(name string) *doc {
	if d, ok := c.docs[name]; ok {
		return d
	}
	data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(name)))
	if err != nil || path.Ext(name) != ".md" {
		c.docs[name] = nil
		return nil
	}
	d := &doc{sections: map[string]bool{}, anchors: map[string]bool{}}
	seen := map[string]int{}
	forEachLine(string(data), func(_ int, line string, inCode bool) {
		if inCode {
			return
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		title := m[2]
		if n := numbered.FindStringSubmatch(title + " "); n != nil {
			d.sections[n[1]] = true
		}
		a := Anchor(title)
		if k := seen[a]; k > 0 {
			d.anchors[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			d.anchors[a] = true
		}
		seen[a]++
	})
	c.docs[name] = d
	return d
}

// Anchor is the fragment a Markdown viewer (GitHub's) gives a heading: lowercase, code and
// emphasis markers removed, every character other than a letter, digit, "-", "_" or space
// dropped, and spaces turned into "-".
func Anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// forEachLine calls fn for each line with its 1-based number and whether it is inside a fenced
// code block (the fence lines count as inside).
func forEachLine(text string, fn func(n int, line string, inCode bool)) {
	sc := bufio.NewScanner(bytes.NewReader([]byte(text)))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			fn(n, line, true)
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
			fn(n, line, true)
		default:
			fn(n, line, fence != "")
		}
	}
}
