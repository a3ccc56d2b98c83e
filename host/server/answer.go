package server

import (
	"encoding/json"
	"fmt"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/spec"
)

// MaxReported is how many drops, and how many warnings, one answer lists; the rest are counted
// in one more entry with code CodeTruncated. loadout_policy_denials_total counts every drop.
const MaxReported = 100

// CodeTruncated is the code of the entry that ends a capped list of drops or warnings.
const CodeTruncated = "truncated"

// DefaultMaxResponse is the default of Config.MaxResponse.
const DefaultMaxResponse = 4 << 20

// capReported returns res with at most MaxReported drops and warnings, each capped list ending
// in one CodeTruncated entry that says how many were left out. res itself is not changed; a
// result within the caps is returned as is.
func capReported(res *host.Result) *host.Result {
	if len(res.Dropped) <= MaxReported && len(res.Warnings) <= MaxReported {
		return res
	}
	c := *res
	c.Dropped = capDiagnostics(res.Dropped)
	if n := len(res.Warnings) - MaxReported; n > 0 {
		c.Warnings = append(res.Warnings[:MaxReported:MaxReported], host.Warning{Code: CodeTruncated, Message: truncatedMessage(n, "warnings")})
	}
	return &c
}

// capDiagnostics returns at most MaxReported of ds, then one CodeTruncated entry.
func capDiagnostics(ds []spec.Diagnostic) []spec.Diagnostic {
	n := len(ds) - MaxReported
	if n <= 0 {
		return ds
	}
	return append(ds[:MaxReported:MaxReported], spec.Diagnostic{Kind: "request", Code: CodeTruncated, Message: truncatedMessage(n, "dropped or changed entries")})
}

func truncatedMessage(n int, what string) string {
	return fmt.Sprintf("%d more %s not listed (an answer lists the first %d)", n, what, MaxReported)
}

// encodeResult is the JSON of a successful render's answer without its token bindings, or an
// error when it is larger than max bytes.
func encodeResult(res *host.Result, max int64) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &responseTooLargeError{size: len(b), max: max}
	}
	return b, nil
}

// withTokens appends the token bindings to an encoded result: the bytes RenderBody marshals to.
func withTokens(result []byte, toks []TokenInfo) ([]byte, error) {
	if len(toks) == 0 {
		return append(result, '\n'), nil
	}
	t, err := json.Marshal(toks)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(result)+len(t)+12)
	out = append(out, result[:len(result)-1]...) // the result's closing brace
	out = append(out, `,"tokens":`...)
	out = append(out, t...)
	return append(out, '}', '\n'), nil
}

// responseTooLargeError is a render whose answer would be larger than Config.MaxResponse.
type responseTooLargeError struct {
	size int
	max  int64
}

func (e *responseTooLargeError) Error() string {
	return fmt.Sprintf("the answer would be %d bytes, more than the limit of %d (--max-response); render fewer servers or skills per request", e.size, e.max)
}
