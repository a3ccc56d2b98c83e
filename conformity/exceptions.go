package conformity

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Exception is one known divergence: harness Harness fails case Case, for Reason.
type Exception struct {
	Harness string
	Case    string
	Reason  string
}

var exceptionLine = regexp.MustCompile(`^([a-z0-9][a-z0-9_-]*)/([a-z0-9]+(?:-[a-z0-9]+)*): (\S.*)$`)

// ParseExceptions reads an exceptions file: one "<harness>/<case>: <reason>" line per known
// divergence (case is the case's name, without its NNN- prefix); blank lines and lines starting
// with "#" are ignored. A malformed or repeated line is an error.
func ParseExceptions(r io.Reader) ([]Exception, error) {
	var out []Exception
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := exceptionLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("exceptions line %d: %q is not \"<harness>/<case>: <reason>\"", n, line)
		}
		k := m[1] + "/" + m[2]
		if seen[k] {
			return nil, fmt.Errorf("exceptions line %d: %s is listed twice", n, k)
		}
		seen[k] = true
		out = append(out, Exception{Harness: m[1], Case: m[2], Reason: m[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read exceptions: %w", err)
	}
	return out, nil
}

// LoadExceptions reads the exceptions file at path (see ParseExceptions).
func LoadExceptions(path string) ([]Exception, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("exceptions: %w", err)
	}
	defer f.Close()
	ex, err := ParseExceptions(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ex, nil
}

// applyExceptions marks a failing result an exception covers as passing (keeping its failures
// for the record), and fails a passing result an exception covers: the exception is stale.
func applyExceptions(results []Result, ex []Exception) {
	reasons := map[string]string{}
	for _, e := range ex {
		reasons[e.Harness+"/"+e.Case] = e.Reason
	}
	for i := range results {
		r := &results[i]
		reason, ok := reasons[r.Harness+"/"+r.Case]
		if !ok {
			continue
		}
		r.Exception = reason
		if r.OK {
			r.OK = false
			r.Failures = append(r.Failures, fmt.Sprintf("stale exception %s/%s (%s): the case now passes; remove it from the exceptions file", r.Harness, r.Case, reason))
			continue
		}
		r.OK = true
	}
}
