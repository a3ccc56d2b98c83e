package host

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/policy"
)

// CodeHeaderUnsendable: a kept http server has a header value its harness cannot send (the
// profile's headerValues is latin1 and the value holds a character above U+00FF): the CLI
// fails every request to that server, so the server is rendered but will not answer.
const CodeHeaderUnsendable = "header_unsendable"

// headerWarnings warns once for each header of a kept http server that the harness of prof
// cannot send, naming the server and the header (never the value, which may be a secret).
func headerWarnings(v *policy.Vetted, prof *plan.Profile) []Warning {
	if prof == nil || prof.HeaderValues != plan.HeaderValuesLatin1 {
		return nil
	}
	var fill []string
	for _, s := range v.Secrets() {
		fill = append(fill, s.Placeholder, s.Value)
	}
	secrets := strings.NewReplacer(fill...)
	var out []Warning
	for _, s := range v.Request().Servers {
		for _, h := range s.Headers {
			val := h.Value
			if h.Secret {
				val = secrets.Replace(val)
			}
			if strings.IndexFunc(val, func(c rune) bool { return c > 0xFF }) >= 0 {
				out = append(out, Warning{Code: CodeHeaderUnsendable, Server: s.ID, Message: fmt.Sprintf(
					"header %q holds a character above U+00FF, which %s cannot send (it sends header values as Latin-1 only): every request to the server fails", h.Name, prof.Harness)})
			}
		}
	}
	return out
}
