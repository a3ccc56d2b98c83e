// Package sdktest runs a renderer natively through the same wire path as its WebAssembly build,
// so a renderer's unit tests exercise the real encoding: the request is encoded as the host
// encodes it (encoding/json), decoded strictly by sdk.Plugin.Render (the very code behind the
// loadout_render export), rendered, encoded, and decoded back strictly as a host would.
//
// Every helper renders twice and fails the test unless both outputs are byte-identical, because
// a plugin must be deterministic. The helpers keep no state and are safe for parallel tests.
package sdktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// LoadRequest reads a test request (an abi.Request as JSON) from path, decoding it strictly:
// a member abi.Request does not have fails the test, so a typo in a fixture never goes unseen.
func LoadRequest(t testing.TB, path string) abi.Request {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("sdktest.LoadRequest: %v", err)
	}
	var req abi.Request
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("sdktest.LoadRequest(%s): %v", path, err)
	}
	return req
}

// Render renders req with r, described by m, and returns the decoded plan. It fails the test
// when m is refused, when the output is not deterministic or not a strictly valid plan, or
// when the renderer reports an error. A zero req.ABIVersion is set to abi.Version and an empty
// req.Harness to m.Harness, as the host always sets both.
func Render(t testing.TB, m abi.Manifest, r sdk.RenderFunc, req abi.Request) abi.Plan {
	t.Helper()
	plan, rerr := Result(t, m, r, req)
	if rerr != nil {
		t.Fatalf("sdktest.Render(%s): renderer returned error %q: %s", m.Name, rerr.Code, rerr.Message)
	}
	return plan
}

// RenderError renders req like Render but expects the renderer to fail, and returns the error
// that crossed the boundary. It fails the test when a plan comes back instead.
func RenderError(t testing.TB, m abi.Manifest, r sdk.RenderFunc, req abi.Request) *abi.Error {
	t.Helper()
	plan, rerr := Result(t, m, r, req)
	if rerr == nil {
		t.Fatalf("sdktest.RenderError(%s): got a plan with %d files, want an error", m.Name, len(plan.Files))
	}
	return rerr
}

// Result renders req like Render and returns either the plan or the error that crossed the
// boundary (exactly one is set).
func Result(t testing.TB, m abi.Manifest, r sdk.RenderFunc, req abi.Request) (abi.Plan, *abi.Error) {
	t.Helper()
	if req.ABIVersion == 0 {
		req.ABIVersion = abi.Version
	}
	if req.Harness == "" {
		req.Harness = m.Harness
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("sdktest: encode request: %v", err)
	}
	return Decode(t, RenderBytes(t, m, r, in))
}

// RenderBytes hands input, the raw request JSON, to the wire path and returns the raw output
// (Plan or ErrorResponse JSON), as the loadout_render export would. Use it to test what a
// renderer receives for malformed input; the output is not checked beyond determinism.
func RenderBytes(t testing.TB, m abi.Manifest, r sdk.RenderFunc, input []byte) []byte {
	t.Helper()
	p, err := sdk.New(m, r)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	first := p.Render(bytes.Clone(input))
	second := p.Render(bytes.Clone(input))
	if !bytes.Equal(first, second) {
		t.Fatalf("sdktest: %s is not deterministic: two renders of the same request differ:\n%s\n%s", m.Name, first, second)
	}
	return first
}

// Decode decodes a render output strictly, as a host does: an object with an "error" member is
// an ErrorResponse, anything else must be a Plan with no unknown field and no trailing data. It
// fails the test when out is neither.
func Decode(t testing.TB, out []byte) (abi.Plan, *abi.Error) {
	t.Helper()
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(out, &probe); err != nil {
		t.Fatalf("sdktest: output is not a JSON object: %v\n%s", err, out)
	}
	if _, ok := probe["error"]; ok {
		var er abi.ErrorResponse
		if err := strict(out, &er); err != nil {
			t.Fatalf("sdktest: invalid error response: %v\n%s", err, out)
		}
		return abi.Plan{}, &er.Error
	}
	var plan abi.Plan
	if err := strict(out, &plan); err != nil {
		t.Fatalf("sdktest: invalid plan: %v\n%s", err, out)
	}
	return plan, nil
}

func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data at offset %d", dec.InputOffset())
	}
	return nil
}
