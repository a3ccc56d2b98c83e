package server

import (
	"errors"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/redact"
)

// scrubber masks a request's secrets in text with host/redact's model (every spelling of every
// secret, leftmost-longest), as `loadout redact` does, and nothing else: a value the request
// does not hold secret (an ordinary header such as X-Client) stays readable. It is used only on
// error paths, built once per failed request.
type scrubber struct {
	r *redact.Redactor
}

// redactions is an error that knows its request's redaction set (*host.RequestError).
type redactions interface{ Redactions() []string }

// newErrorScrubber masks what err's request holds secret. An error of a request that parsed
// carries the request's redaction set as far as the host knew it (host.RequestError: the
// vetted set, or before the policy decided, the secrets the request declares); any other
// error (a renderer's panic, say) gets the secrets body declares (host.DeclaredRedactions).
// minted are the run tokens minted for the request, masked in either case.
func newErrorScrubber(body []byte, err error, minted ...string) *scrubber {
	var set []string
	var rd redactions
	if errors.As(err, &rd) {
		set = rd.Redactions()
	} else {
		set = host.DeclaredRedactions(body)
	}
	for _, m := range minted {
		set = append(set, redact.Spellings(m)...)
	}
	return &scrubber{r: redact.New(set)}
}

// clean returns msg with every secret spelling masked.
func (s *scrubber) clean(msg string) string { return s.r.String(msg) }
