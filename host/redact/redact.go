// Package redact is loadout's one masking model: what a secret is shown as (Mask), which
// spellings of a secret are masked (Spellings, and what New derives from them), and the
// Redactor that masks them, built once per set of secrets. Every place loadout shows text that
// may hold a secret uses it: `loadout redact`, the messages of rules and of serve's errors, the
// input document `loadout policy input` prints and the rule output of `policy eval`, and a dry
// run's content and environment.
//
// The rule. A secret's redaction set (Spellings) is every form a config may hold its value in
// (the value itself, then each harness spelling, host/plan.SecretSpellings) and, where escaping
// changes a form, the form as spelled inside a JSON string and inside a TOML basic string.
// A Redactor masks every string of the set it is given and what a log derives from one: the
// credential alone of "<scheme> <credential>" (an Authorization value such as "Bearer abc…")
// and the Go-quoted spelling (%q) of each. Only those strings are masked: text that is no
// spelling of a secret passes unchanged.
//
// Matching is leftmost-longest: scanning from the left, at each position the longest secret
// spelling that starts there is masked and scanning resumes after it, so a secret that is a
// substring of another never splits the longer one. Finding the longest spelling at a position
// walks a trie at most as deep as the longest spelling, whatever the number of secrets: the
// cost is linear in the input for a given set. Streaming (Copy, Writer) gives exactly the
// output of String on the whole input, whatever the read or write boundaries.
//
// A Redactor is immutable after New and safe for concurrent use; a Writer and a Set are not.
package redact

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/format"
)

// Mask is what every masked secret spelling becomes, wherever loadout shows it.
const Mask = "[REDACTED]"

// Spellings returns the redaction set of one secret value, given forms, the ways a harness
// config may hold it: the value itself first, then each harness spelling
// (host/plan.SecretSpellings gives all of them). It lists each form and, when a JSON or TOML
// string would escape it, its JSON and TOML string bodies (sdk/format's spellings, the ones
// the host writes secrets with); non-empty, de-duplicated, in order.
func Spellings(forms ...string) []string {
	var s Set
	s.Add(forms...)
	return s.List()
}

// Set accumulates the redaction set of several secrets (Spellings of each), de-duplicated, in
// the order added. The zero value is empty and ready to use; a Set is not safe for concurrent
// use.
type Set struct {
	list []string
	seen map[string]bool
}

// Add adds the spellings of one secret value given its forms (Spellings).
func (s *Set) Add(forms ...string) {
	for _, f := range forms {
		s.add(f)
		if !spelledAsIs(f) {
			s.add(format.JSONStringBody(f))
			s.add(format.TOMLStringBody(f))
		}
	}
}

func (s *Set) add(spelling string) {
	if spelling == "" || s.seen[spelling] {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[spelling] = true
	s.list = append(s.list, spelling)
}

// List returns the set's strings in the order added (a copy; nil when empty).
func (s *Set) List() []string { return slices.Clone(s.list) }

// Len is the number of strings in the set.
func (s *Set) Len() int { return len(s.list) }

// spelledAsIs reports whether s reads the same inside a JSON string and a TOML basic string:
// printable ASCII without a quote, a backslash or a character JSON escapes (<, >, &).
func spelledAsIs(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// derive returns set and what a log derives from its strings: the credential alone of each
// "<scheme> <credential>" (schemes Bearer, Basic, Token, Bot, any case; a credential of at
// least 8 bytes without blanks: logs often print the token without its scheme) and the
// Go-quoted spelling of each string (strconv.Quote's body: an error message quotes values
// with %q), each when different from what is there.
func derive(set []string) []string {
	var s Set
	for _, v := range set {
		s.add(v)
	}
	for _, v := range set {
		scheme, cred, ok := strings.Cut(v, " ")
		if !ok || len(cred) < 8 || strings.ContainsAny(cred, " \t") {
			continue
		}
		switch strings.ToLower(scheme) {
		case "bearer", "basic", "token", "bot":
			s.add(cred)
		}
	}
	for _, v := range s.List() {
		q := strconv.Quote(v)
		s.add(q[1 : len(q)-1])
	}
	return s.list
}

// Redactor masks a fixed set of secrets.
type Redactor struct {
	trie   []node // every secret spelled from the root, trie[0]
	maxLen int    // length of the longest secret; 0 when there is none
}

// node is one byte position of the trie: edges to the next bytes in byte order, and whether
// a secret ends here. Finding the longest secret at a position walks at most maxLen nodes,
// however many secrets there are, so masking costs grow with the text, not text × secrets.
type node struct {
	edges []edge
	end   bool
}

type edge struct {
	b     byte
	child int32
}

// next returns the child of n along b, or 0 (the root is never a child).
func (n *node) next(b byte) int32 {
	i, ok := slices.BinarySearchFunc(n.edges, b, func(e edge, b byte) int { return cmp.Compare(e.b, b) })
	if !ok {
		return 0
	}
	return n.edges[i].child
}

// New returns a Redactor that masks every string of set (a redaction set: the Spellings of
// each secret, policy.Vetted.Redactions) and what a log derives from one (the package doc).
// Empty strings are ignored, duplicates collapse. Build it once per set and share it.
func New(set []string) *Redactor {
	r := &Redactor{trie: []node{{}}}
	for _, s := range derive(set) {
		r.insert([]byte(s))
		r.maxLen = max(r.maxLen, len(s))
	}
	return r
}

// insert adds s to the trie.
func (r *Redactor) insert(s []byte) {
	at := int32(0)
	for _, b := range s {
		child := r.trie[at].next(b)
		if child == 0 {
			child = int32(len(r.trie))
			r.trie = append(r.trie, node{})
			edges := r.trie[at].edges
			i, _ := slices.BinarySearchFunc(edges, b, func(e edge, b byte) int { return cmp.Compare(e.b, b) })
			r.trie[at].edges = slices.Insert(edges, i, edge{b: b, child: child})
		}
		at = child
	}
	r.trie[at].end = true
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if r == nil || r.maxLen == 0 {
		return s
	}
	var out bytes.Buffer
	r.scan(&out, []byte(s), true)
	return out.String()
}

// matchAt returns the length of the longest secret at the start of b, or 0.
func (r *Redactor) matchAt(b []byte) int {
	longest, at := 0, int32(0)
	for i, c := range b {
		if at = r.trie[at].next(c); at == 0 {
			break
		}
		if r.trie[at].end {
			longest = i + 1
		}
	}
	return longest
}

// scan writes the masked form of the positions of b it can decide and returns how many bytes
// of b it consumed. Unless final, a position is decided only when every secret fits in b from
// there, so the undecided tail (shorter than the longest secret) waits for more input.
func (r *Redactor) scan(out *bytes.Buffer, b []byte, final bool) int {
	limit := len(b)
	if !final {
		limit = len(b) - r.maxLen + 1
	}
	start, i := 0, 0
	for i < limit {
		n := r.matchAt(b[i:])
		if n == 0 {
			i++
			continue
		}
		out.Write(b[start:i])
		out.WriteString(Mask)
		i += n
		start = i
	}
	if i > len(b) {
		i = len(b)
	}
	out.Write(b[start:i])
	return i
}

// Copy copies src to dst with every secret masked, like io.Copy, and returns the number of
// bytes written to dst. A secret split across reads is masked all the same.
func (r *Redactor) Copy(dst io.Writer, src io.Reader) (int64, error) {
	w := r.NewWriter(dst)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return w.written, err
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return w.written, rerr
		}
	}
	err := w.Close()
	return w.written, err
}

// Writer masks secrets in what is written to it and writes the result to the underlying
// writer. It holds back fewer bytes than the longest secret until it can decide them; Close
// writes the rest (it does not close the underlying writer). A Writer is not safe for
// concurrent use.
type Writer struct {
	r       *Redactor
	dst     io.Writer
	pending []byte
	out     bytes.Buffer
	written int64
	closed  bool
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("redact: write after close")

// NewWriter returns a Writer that masks r's secrets on their way to dst.
func (r *Redactor) NewWriter(dst io.Writer) *Writer {
	return &Writer{r: r, dst: dst}
}

// Write masks p (with what is pending from earlier writes) and writes every decided byte.
// It reports len(p) on success: the bytes are accepted, masked or pending.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.r == nil || w.r.maxLen == 0 {
		n, err := w.dst.Write(p)
		w.written += int64(n)
		return n, err
	}
	w.pending = append(w.pending, p...)
	n := w.r.scan(&w.out, w.pending, false)
	w.pending = w.pending[:copy(w.pending, w.pending[n:])]
	if err := w.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes the pending bytes, masked. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.r == nil || w.r.maxLen == 0 {
		return nil
	}
	w.r.scan(&w.out, w.pending, true)
	w.pending = nil
	return w.flush()
}

func (w *Writer) flush() error {
	if w.out.Len() == 0 {
		return nil
	}
	n, err := w.dst.Write(w.out.Bytes())
	w.written += int64(n)
	w.out.Reset()
	return err
}
