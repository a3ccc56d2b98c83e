package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/loadout-dev/loadout/host/redact"
)

// secretMembers are the request members whose string values may be secrets: a server's env and
// headers, and the run's tokens.
var secretMembers = map[string]bool{"env": true, "headers": true, "tokens": true}

// minScrubLen is the shortest value the structural fallback masks; shorter values would mangle
// messages without protecting anything a guess could not find.
const minScrubLen = 4

// scrubber masks a request's secrets in text, with host/redact's model (every spelling of
// every secret, leftmost-longest), as `loadout redact` does. It is used only on error paths.
type scrubber struct {
	r *redact.Redactor
}

// redactions is an error that knows its request's redaction set (*host.VettedError).
type redactions interface{ Redactions() []string }

// newErrorScrubber masks what err's request holds secret. Once the policy vetted the request,
// the error carries the request's redaction set and exactly those secrets are masked (with the
// credential of each "Bearer <credential>" alone); before that, which values are secrets is
// not known yet and every value under an env, headers or tokens member is (newScrubber).
// minted are the run tokens minted for the request, masked in either case.
func newErrorScrubber(body []byte, err error, minted ...string) *scrubber {
	var rd redactions
	if errors.As(err, &rd) {
		return &scrubber{r: redact.New(append(redact.WithCredentials(rd.Redactions()), minted...))}
	}
	return newScrubber(body, minted...)
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
	return &scrubber{r: redact.New(all)}
}

// clean returns msg with every collected value masked.
func (s *scrubber) clean(msg string) string { return s.r.String(msg) }
