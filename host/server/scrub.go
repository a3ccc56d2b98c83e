package server

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
)

// secretMembers are the request members whose string values may be secrets: a server's env and
// headers, and the run's tokens.
var secretMembers = map[string]bool{"env": true, "headers": true, "tokens": true}

// minScrubLen is the shortest value the scrubber masks; shorter values would mangle messages
// without protecting anything a guess could not find.
const minScrubLen = 4

// mask replaces a scrubbed value.
const mask = "[redacted]"

// scrubber masks the secret-bearing values of one request body in text. It is used only on
// error paths: building it walks the body's tokens.
type scrubber struct {
	values []string // longest first, so a value is masked before any value it contains
}

// newScrubber collects every string value found under an "env", "headers" or "tokens" member
// anywhere in body, duplicates and all (the token walk sees members a map decode would merge),
// in raw, JSON-escaped and Go-quoted spellings. A body that is not JSON yields what was read
// before the syntax error.
//
// extra are more values to mask: the run tokens minted for the request.
func newScrubber(body []byte, extra ...string) *scrubber {
	seen := map[string]bool{}
	var values []string
	add := func(v string) {
		if len(v) < minScrubLen || seen[v] {
			return
		}
		seen[v] = true
		values = append(values, v)
	}
	for _, v := range extra {
		add(v)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// stack holds, per open container, whether it is an object, the member name awaiting its
	// value, and whether it lies under a secret member.
	type frame struct {
		object  bool
		key     string
		wantKey bool
		secret  bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			break
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		// under reports whether a value at this position is under a secret member.
		under := top != nil && (top.secret || (top.object && !top.wantKey && secretMembers[top.key]))
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, frame{object: t == '{', wantKey: t == '{', secret: under})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.object && top.wantKey {
				top.key, top.wantKey = t, false
				continue
			}
			if under {
				add(t)
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	var all []string
	for _, v := range values {
		all = append(all, v)
		if b, err := json.Marshal(v); err == nil {
			if e := string(b[1 : len(b)-1]); e != v {
				all = append(all, e)
			}
		}
		if q := strconv.Quote(v); q[1:len(q)-1] != v {
			all = append(all, q[1:len(q)-1])
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	return &scrubber{values: all}
}

// clean returns msg with every collected value masked.
func (s *scrubber) clean(msg string) string {
	for _, v := range s.values {
		if strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, mask)
		}
	}
	return msg
}
