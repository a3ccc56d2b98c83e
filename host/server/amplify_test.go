package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/spec"
)

// unknownMembersBody is a request whose one server carries n unknown members: under 1 MiB of
// body that the parser reports member by member.
func unknownMembersBody(n int) string {
	var b strings.Builder
	b.WriteString(`{"harness":"claude","mcpServers":[{"id":"fs","transport":"http","url":"https://fs.example.com/mcp"`)
	for i := range n {
		fmt.Fprintf(&b, `,"_%s":0`, strconv.FormatInt(int64(i), 36))
	}
	b.WriteString(`}]}`)
	return b.String()
}

// nonStringArgsBody is a request whose one server has n args that are not strings, each
// removed and reported on its own.
func nonStringArgsBody(n int) string {
	return `{"harness":"claude","mcpServers":[{"id":"fs","command":"/usr/bin/fs-mcp","args":[0` +
		strings.Repeat(",0", n-1) + `]}]}`
}

// TestAnswerAmplification sends bodies under 1 MiB that make the parser report entry by entry
// (100k unknown members inside a server; 100k args that are not strings): the answer lists at
// most MaxReported drops, then one entry saying how many more there were, and stays small
// whatever the body asked the parser to report.
func TestAnswerAmplification(t *testing.T) {
	s, _ := newTestServer(t, Config{}, realLoader(t))
	defer s.Close()
	for _, tc := range []struct {
		name string
		body string
		// capped: the parser reports more than MaxReported entries for this body
		capped bool
	}{
		{name: "unknown members in a server", body: unknownMembersBody(100_000)},
		{name: "non-string args", body: nonStringArgsBody(100_000), capped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Less(t, len(tc.body), DefaultMaxBody, "the body fits the default limit")
			rec := do(s.Handler(), http.MethodPost, "/v1/render", tc.body)
			require.LessOrEqual(t, rec.Body.Len(), 64<<10, "answer of %d bytes to a %d-byte body", rec.Body.Len(), len(tc.body))
			var dropped []spec.Diagnostic
			switch rec.Code {
			case http.StatusOK:
				var res wireResult
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), "decode %s", rec.Body.String())
				dropped = res.Dropped
			default:
				var eb ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "decode %s", rec.Body.String())
				dropped = eb.Dropped
			}
			require.LessOrEqual(t, len(dropped), MaxReported+1, "listed drops (status %d)", rec.Code)
			if tc.capped {
				require.Len(t, dropped, MaxReported+1, "listed drops: the cap and the summary (status %d, %.300s)", rec.Code, rec.Body.String())
			}
			if len(dropped) == MaxReported+1 {
				last := dropped[len(dropped)-1]
				assert.Equal(t, CodeTruncated, last.Code, "the last entry summarises")
				assert.Contains(t, last.Message, "more", "the summary says what was left out: %q", last.Message)
			}
		})
	}
}

// TestCapReported caps drops and warnings alike, keeping the first ones in order and counting
// the rest in one entry; lists within the cap are untouched.
func TestCapReported(t *testing.T) {
	var drops []spec.Diagnostic
	var warns []host.Warning
	for i := range MaxReported + 7 {
		drops = append(drops, spec.Diagnostic{Kind: "server", Name: "fs", Field: fmt.Sprintf("mcpServers[0].u%d", i), Code: spec.CodeUnknownField})
		warns = append(warns, host.Warning{Code: "w", Message: fmt.Sprint(i)})
	}
	res := &host.Result{Dropped: drops, Warnings: warns}
	capped := capReported(res)
	require.Len(t, capped.Dropped, MaxReported+1)
	require.Len(t, capped.Warnings, MaxReported+1)
	assert.Equal(t, drops[:MaxReported], capped.Dropped[:MaxReported], "the first drops kept in order")
	assert.Equal(t, warns[:MaxReported], capped.Warnings[:MaxReported], "the first warnings kept in order")
	assert.Equal(t, CodeTruncated, capped.Dropped[MaxReported].Code)
	assert.Contains(t, capped.Dropped[MaxReported].Message, "7 more")
	assert.Equal(t, CodeTruncated, capped.Warnings[MaxReported].Code)
	assert.Contains(t, capped.Warnings[MaxReported].Message, "7 more")
	assert.Len(t, res.Dropped, MaxReported+7, "the render's own result is not changed")

	small := &host.Result{Dropped: drops[:3], Warnings: warns[:2]}
	assert.Same(t, small, capReported(small), "a result within the cap is answered as is")
}

// TestMaxResponse answers a render whose answer is over MaxResponse 413, naming the limit,
// and removes what it wrote.
func TestMaxResponse(t *testing.T) {
	roots := t.TempDir()
	s, _ := newTestServer(t, Config{MaxResponse: 64, Roots: roots}, fixedLoader(newFake("a")))
	defer s.Close()
	rec := do(s.Handler(), http.MethodPost, "/v1/render", requestBody("roots"))
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "status (body %s)", rec.Body.String())
	var eb ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &eb), "decode %s", rec.Body.String())
	assert.Equal(t, OutcomeTooLarge, eb.Error.Code)
	assert.Contains(t, eb.Error.Message, "limit of 64", "the message names the limit")
	entries, err := os.ReadDir(roots)
	require.NoError(t, err)
	assert.Empty(t, entries, "a render whose answer was not sent leaves nothing written")

	s2, _ := newTestServer(t, Config{Roots: roots}, fixedLoader(newFake("b")))
	defer s2.Close()
	rec = do(s2.Handler(), http.MethodPost, "/v1/render", requestBody("roots"))
	require.Equal(t, http.StatusOK, rec.Code, "within the default limit (body %s)", rec.Body.String())
}
