// Package redact masks secret strings in text: every occurrence of a secret becomes
// [REDACTED]. Callers pass every spelling a secret may take (raw, JSON-escaped, TOML-escaped:
// policy.Vetted.Redactions gives them); to this package they are just more strings.
//
// Matching is leftmost-longest: scanning from the left, at each position the longest secret
// that starts there is masked and scanning resumes after it. Streaming (Copy, Writer) gives
// exactly the output of String on the whole input, whatever the read or write boundaries.
//
// A Redactor is immutable after New and safe for concurrent use; a Writer is not.
package redact

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"strings"
)

// Mask replaces every secret occurrence.
const Mask = "[REDACTED]"

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

// New returns a Redactor for secrets. Empty strings are ignored, duplicates collapse.
func New(secrets []string) *Redactor {
	r := &Redactor{trie: []node{{}}}
	for _, s := range secrets {
		if s == "" {
			continue
		}
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

// WithCredentials returns secrets and, for each secret spelled "<scheme> <credential>" (an
// Authorization header value such as "Bearer abc"), the credential alone: logs often print the
// token without its scheme.
func WithCredentials(secrets []string) []string {
	out := append([]string(nil), secrets...)
	for _, s := range secrets {
		scheme, cred, ok := strings.Cut(s, " ")
		if !ok || len(cred) < 8 || strings.ContainsAny(cred, " \t") {
			continue
		}
		switch strings.ToLower(scheme) {
		case "bearer", "basic", "token", "bot":
			out = append(out, cred)
		}
	}
	return out
}
