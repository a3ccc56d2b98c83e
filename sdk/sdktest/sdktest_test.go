package sdktest_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/sdktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var manifest = abi.Manifest{
	Name:       "render.example",
	Version:    "0.1.0",
	Harness:    "example",
	Transports: []string{abi.TransportStdio},
	Roots:      []string{abi.RootRun},
}

// echo writes one file per server, with the server's command as content.
func echo(req abi.Request) (abi.Plan, error) {
	plan := abi.Plan{Prompt: "user " + req.Run.User}
	for _, s := range req.Servers {
		plan.Files = append(plan.Files, abi.File{Root: abi.RootRun, Path: s.ID + ".txt", Mode: "0600", Format: abi.FormatText, Content: s.Command})
	}
	return plan, nil
}

func TestRenderReturnsThePlan(t *testing.T) {
	t.Parallel()
	req := abi.Request{Run: abi.Run{User: "ada"}, Servers: []abi.Server{{ID: "a", Transport: abi.TransportStdio, Command: "/bin/a \"q\"\n"}}}
	got := sdktest.Render(t, manifest, echo, req)
	want := abi.Plan{
		Files:      []abi.File{{Root: abi.RootRun, Path: "a.txt", Mode: "0600", Format: abi.FormatText, Content: "/bin/a \"q\"\n"}},
		Args:       []string{},
		Env:        []abi.Pair{},
		Prompt:     "user ada",
		GitExclude: []string{},
		Warnings:   []abi.Warning{},
	}
	assert.Equal(t, want, got, "sdktest.Render(echo, %+v)", req)
}

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		render   sdk.RenderFunc
		req      abi.Request
		wantCode string
		wantMsg  string // "" = not checked
	}{
		{
			name: "abi.Error keeps its code",
			render: func(abi.Request) (abi.Plan, error) {
				return abi.Plan{}, &abi.Error{Code: abi.CodeUnsupported, Message: "no sse"}
			},
			wantCode: abi.CodeUnsupported, wantMsg: "no sse",
		},
		{
			name: "wrapped abi.Error keeps its code",
			render: func(abi.Request) (abi.Plan, error) {
				return abi.Plan{}, fmt.Errorf("render docs: %w", &abi.Error{Code: abi.CodeInvalidInput, Message: "bad url"})
			},
			wantCode: abi.CodeInvalidInput, wantMsg: "bad url",
		},
		{
			name:     "abi.Error with an unknown code becomes internal",
			render:   func(abi.Request) (abi.Plan, error) { return abi.Plan{}, &abi.Error{Code: "teapot", Message: "x"} },
			wantCode: abi.CodeInternal,
		},
		{
			name:     "plain error becomes internal",
			render:   func(abi.Request) (abi.Plan, error) { return abi.Plan{}, errors.New("disk on fire") },
			wantCode: abi.CodeInternal, wantMsg: "disk on fire",
		},
		{
			name:     "panic becomes internal",
			render:   func(abi.Request) (abi.Plan, error) { panic("boom") },
			wantCode: abi.CodeInternal, wantMsg: "render panicked: boom",
		},
		{
			name: "runtime panic becomes internal",
			render: func(req abi.Request) (abi.Plan, error) {
				_ = req.Servers[3]
				return abi.Plan{}, nil
			},
			wantCode: abi.CodeInternal,
		},
		{
			name: "plan with invalid UTF-8 becomes internal",
			render: func(abi.Request) (abi.Plan, error) {
				return abi.Plan{Files: []abi.File{{Root: abi.RootRun, Path: "x", Content: "\xff"}}}, nil
			},
			wantCode: abi.CodeInternal,
		},
		{
			name:     "request for another harness is unsupported",
			render:   echo,
			req:      abi.Request{Harness: "claude"},
			wantCode: abi.CodeUnsupported,
		},
		{
			name:     "request with another ABI version is invalid input",
			render:   echo,
			req:      abi.Request{ABIVersion: abi.Version + 1},
			wantCode: abi.CodeInvalidInput,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sdktest.RenderError(t, manifest, tc.render, tc.req)
			assert.Equal(t, tc.wantCode, got.Code, "RenderError(%s) code (message %q)", tc.name, got.Message)
			if tc.wantMsg != "" {
				assert.Contains(t, got.Message, tc.wantMsg, "RenderError(%s) message", tc.name)
			}
		})
	}
}

func TestRenderBytesRejectsMalformedRequests(t *testing.T) {
	t.Parallel()
	called := false
	spy := func(req abi.Request) (abi.Plan, error) { called = true; return echo(req) }
	for _, in := range []string{
		`{"abiVersion":1,"harness":"example","harness":"example"}`,
		`{"abiVersion":1,"harness":"example","extra":1}`,
		`{"abiVersion":1,"harness":"example"} {}`,
		"{\"abiVersion\":1,\"harness\":\"ex\xffample\"}",
		`not json`,
	} {
		out := sdktest.RenderBytes(t, manifest, spy, []byte(in))
		plan, rerr := sdktest.Decode(t, out)
		require.NotNil(t, rerr, "RenderBytes(%q) = plan %+v, want an error", in, plan)
		assert.Equal(t, abi.CodeInvalidInput, rerr.Code, "RenderBytes(%q) code (message %q)", in, rerr.Message)
	}
	assert.False(t, called, "the renderer was called with a malformed request")
}

// recorder is a testing.TB that records a fatal failure instead of ending the test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// run calls f with a recorder in its own goroutine (Fatalf ends that goroutine).
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestHelpersFailTheTest(t *testing.T) {
	t.Parallel()
	counter := 0
	cases := []struct {
		name string
		f    func(tb testing.TB)
	}{
		{"Render with a renderer error", func(tb testing.TB) {
			sdktest.Render(tb, manifest, func(abi.Request) (abi.Plan, error) { return abi.Plan{}, errors.New("x") }, abi.Request{})
		}},
		{"RenderError with a plan", func(tb testing.TB) { sdktest.RenderError(tb, manifest, echo, abi.Request{}) }},
		{"Render with a non-deterministic renderer", func(tb testing.TB) {
			sdktest.Render(tb, manifest, func(abi.Request) (abi.Plan, error) {
				counter++
				return abi.Plan{Prompt: fmt.Sprint(counter)}, nil
			}, abi.Request{})
		}},
		{"Render with a refused manifest", func(tb testing.TB) {
			sdktest.Render(tb, abi.Manifest{Name: "x", Version: "1", Harness: "x", Roots: []string{"home"}}, echo, abi.Request{})
		}},
		{"Decode of an unknown plan field", func(tb testing.TB) { sdktest.Decode(tb, []byte(`{"files":[],"shell":"rm"}`)) }},
		{"Decode of trailing data", func(tb testing.TB) { sdktest.Decode(tb, []byte(`{"files":[]}]`)) }},
		{"Decode of a non-object", func(tb testing.TB) { sdktest.Decode(tb, []byte(`[]`)) }},
	}
	for _, tc := range cases {
		r := run(t, tc.f)
		assert.True(t, r.failed, "%s: the helper did not fail the test", tc.name)
	}
}
