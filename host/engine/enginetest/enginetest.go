// Package enginetest is the behavioural suite every engine.Engine passes. An engine's own test
// calls Run with a constructor; the suite compiles well-behaved and hostile plugins (WAT sources
// in testdata, built with wat2wasm once per test binary, and a Go plugin written against the
// ABI) and checks that each hostile behaviour ends in a typed error and leaves the engine usable.
//
// The helpers WAT, GoPlugin and Request are exported for benchmarks and other packages' tests.
// Everything here is for tests only; the helpers are safe for concurrent use.
package enginetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Limits are the tight limits the suite compiles plugins with. The deadline leaves a loaded
// CI machine (race detector, parallel packages) ample time for a well-behaved call.
var Limits = engine.Limits{
	ModuleBytes: 1 << 20,
	MemoryPages: 64, // 4 MiB
	Deadline:    10 * time.Second,
	OutputBytes: 64 << 10,
	StderrBytes: 256,
	MaxFiles:    16,
}

// spinDeadline is the deadline of plugins that never return, which the suite waits out.
const spinDeadline = 300 * time.Millisecond

// okManifest is the manifest testdata/ok.wat returns.
const okManifest = `{"name":"render.test","version":"1.0.0","abiVersion":1,"harness":"test","transports":["stdio","http"],"nativeSkills":false,"roots":["config","run"]}`

// Run runs the suite. newEngine is called once; the engine is closed when the test ends.
func Run(t *testing.T, newEngine func(t *testing.T) engine.Engine) {
	eng := newEngine(t)
	t.Cleanup(func() { assert.NoError(t, eng.Close(context.Background()), "Close(engine)") })
	s := &suite{eng: eng}
	s.fresh = s.freshState(t)
	t.Run("WellBehaved", s.wellBehaved)
	t.Run("CompileRejects", s.compileRejects)
	t.Run("CallFails", s.callFails)
	t.Run("OutputBounds", s.outputBounds)
	t.Run("GuestOutputBounded", s.guestOutput)
	t.Run("Sandbox", s.sandbox)
	t.Run("Hammer", s.hammer)
	t.Run("GoPlugin", s.goPlugin)
	t.Run("Cancel", s.cancel)
	t.Run("ModuleClose", s.moduleClose)
	t.Run("EngineClose", func(t *testing.T) { engineClose(t, newEngine(t)) })
}

// engineClose checks that closing an engine closes the modules it compiled.
func engineClose(t *testing.T, eng engine.Engine) {
	ctx := context.Background()
	m, err := eng.Compile(ctx, WAT(t, "ok"), "", Limits)
	require.NoError(t, err, "Compile(ok.wat)")
	_, err = m.Call(ctx, abi.ExportManifest, nil)
	require.NoError(t, err, "Call(manifest) before Close(engine)")
	require.NoError(t, eng.Close(ctx), "Close(engine) with a module open")
	_, err = m.Call(ctx, abi.ExportManifest, nil)
	assert.ErrorIs(t, err, engine.ErrClosed, "Call(manifest) after Close(engine)")
	assert.NoError(t, m.Close(ctx), "Close(module) after Close(engine)")
}

type suite struct {
	eng engine.Engine
	// fresh is the two state digits ok.wat's render reports in a fresh instance ("00"). Every
	// call must report the same digits; a state leak would raise them.
	fresh string
}

// freshState learns s.fresh from a first render on ok.wat, and checks a second module agrees.
func (s *suite) freshState(t *testing.T) string {
	t.Helper()
	var digits []string
	for range 2 {
		m, err := s.eng.Compile(context.Background(), WAT(t, "ok"), "", Limits)
		require.NoError(t, err, "Compile(ok.wat) on %s", s.eng.Name())
		got, err := m.Call(context.Background(), abi.ExportRender, []byte("first"))
		require.NoError(t, err, "Call(render) on ok.wat on %s", s.eng.Name())
		require.NoError(t, m.Close(context.Background()), "Close(ok.wat)")
		require.Len(t, got, 2+len("first"), "Call(render, %q) on ok.wat: two state digits then the input", "first")
		require.Equal(t, "first", string(got[2:]), "Call(render, %q) on ok.wat echoes its input after the digits", "first")
		require.True(t, got[0] >= '0' && got[0] <= '9' && got[1] >= '0' && got[1] <= '9', "Call(render) on ok.wat = %q: want two digits first", got)
		digits = append(digits, string(got[:2]))
	}
	require.Equal(t, digits[0], digits[1], "two modules of ok.wat must start from the same state on %s", s.eng.Name())
	return digits[0]
}

func (s *suite) compile(t *testing.T, name string, l engine.Limits) engine.Module {
	t.Helper()
	m, err := s.eng.Compile(context.Background(), WAT(t, name), "", l)
	require.NoError(t, err, "Compile(%s.wat) on %s", name, s.eng.Name())
	t.Cleanup(func() { assert.NoError(t, m.Close(context.Background()), "Close(%s)", name) })
	return m
}

// stillWorks checks the engine compiles and runs a well-behaved plugin.
func (s *suite) stillWorks(t *testing.T) {
	t.Helper()
	m := s.compile(t, "ok", Limits)
	got, err := m.Call(context.Background(), abi.ExportRender, []byte("after"))
	require.NoError(t, err, "Call(render) on ok.wat after a hostile plugin on %s", s.eng.Name())
	assert.Equal(t, s.fresh+"after", string(got), "Call(render, %q) on ok.wat", "after")
}

func (s *suite) wellBehaved(t *testing.T) {
	m := s.compile(t, "ok", Limits)
	ctx := context.Background()
	got, err := m.Call(ctx, abi.ExportManifest, nil)
	require.NoError(t, err, "Call(manifest) on ok.wat")
	assert.Equal(t, okManifest, string(got), "Call(manifest) on ok.wat")
	for _, in := range []string{"", "x", `{"harness":"test"}`, strings.Repeat("y", 60_000)} {
		got, err := m.Call(ctx, abi.ExportRender, []byte(in))
		require.NoError(t, err, "Call(render, %d bytes) on ok.wat", len(in))
		assert.Equal(t, s.fresh+in, string(got), "Call(render, %d bytes) on ok.wat: want the fresh state digits %s then the input", len(in), s.fresh)
	}
	_, err = m.Call(ctx, abi.ExportAlloc, []byte("x"))
	assert.ErrorIs(t, err, engine.ErrABI, "Call(%s) is not a callable export", abi.ExportAlloc)
}

func (s *suite) compileRejects(t *testing.T) {
	small := Limits
	small.ModuleBytes = 64
	tests := []struct {
		name   string
		wasm   func(t *testing.T) []byte
		limits engine.Limits
		want   error
	}{
		{"module over the size cap", func(t *testing.T) []byte { return WAT(t, "ok") }, small, engine.ErrModuleSize},
		{"not wasm", func(*testing.T) []byte { return []byte("\x00asm garbage") }, Limits, engine.ErrABI},
		{"declared initial memory over the cap", func(t *testing.T) []byte { return WAT(t, "huge_min") }, Limits, engine.ErrMemoryLimit},
		{"declared maximum memory over the cap", func(t *testing.T) []byte { return WAT(t, "huge_max") }, Limits, engine.ErrMemoryLimit},
		{"missing render export", func(t *testing.T) []byte { return WAT(t, "missing_render") }, Limits, engine.ErrABI},
		{"memory not exported", func(t *testing.T) []byte { return WAT(t, "missing_memory") }, Limits, engine.ErrABI},
		{"render of the wrong type", func(t *testing.T) []byte { return WAT(t, "wrong_render_type") }, Limits, engine.ErrABI},
		{"_initialize of the wrong type", func(t *testing.T) []byte { return WAT(t, "wrong_init_type") }, Limits, engine.ErrABI},
		{"abi_version of the wrong type", func(t *testing.T) []byte { return WAT(t, "wrong_abi_type") }, Limits, engine.ErrABI},
		{"unknown import env.evil", func(t *testing.T) []byte { return WAT(t, "evil_import") }, Limits, engine.ErrLink},
		{"import of the reserved loadout:meter.yield", func(t *testing.T) []byte { return WAT(t, "meter_import") }, Limits, engine.ErrLink},
		{"WASI import of the wrong type", func(t *testing.T) []byte { return WAT(t, "wasi_wrong_type") }, Limits, engine.ErrLink},
		{"WASI import that does not exist", func(t *testing.T) []byte { return WAT(t, "wasi_unknown") }, Limits, engine.ErrLink},
		{"imported memory", func(t *testing.T) []byte { return WAT(t, "memory_import") }, Limits, engine.ErrLink},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := s.eng.Compile(context.Background(), tc.wasm(t), "", tc.limits)
			if m != nil {
				_ = m.Close(context.Background())
			}
			require.Error(t, err, "Compile(%s) on %s succeeded, want %v", tc.name, s.eng.Name(), tc.want)
			assert.ErrorIs(t, err, tc.want, "Compile(%s) on %s", tc.name, s.eng.Name())
			s.stillWorks(t)
		})
	}
}

func (s *suite) callFails(t *testing.T) {
	tests := []struct {
		name     string
		module   string
		export   string
		want     error         // nil: only a *TrapError is wanted
		trap     bool          // the error must also be a *engine.TrapError
		wantTrap string        // the TrapError's Export
		deadline time.Duration // 0: Limits.Deadline
	}{
		{"infinite loop in render", "loop_render", abi.ExportRender, engine.ErrTimeout, false, "", spinDeadline},
		{"infinite loop in _initialize", "loop_init", abi.ExportManifest, engine.ErrTimeout, false, "", spinDeadline},
		{"memory.grow bomb", "grow_bomb", abi.ExportRender, engine.ErrMemoryLimit, true, abi.ExportRender, 0},
		{"unreachable", "noisy_trap", abi.ExportRender, nil, true, abi.ExportRender, 0},
		{"proc_exit in render", "proc_exit", abi.ExportRender, nil, true, abi.ExportRender, 0},
		// wazero lets a call stack grow to 400 MB before it reports an overflow, which takes
		// close to a second; the deadline must not win that race.
		{"stack overflow", "stack_overflow", abi.ExportRender, nil, true, abi.ExportRender, 0},
		{"wrong ABI version", "abi_v2", abi.ExportRender, engine.ErrABIVersion, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := Limits
			if tc.deadline > 0 {
				l.Deadline = tc.deadline
			}
			if tc.module == "loop_init" {
				// An engine that pre-initializes modules runs _initialize in Compile: the
				// same failure then comes from Compile.
				m, err := s.eng.Compile(context.Background(), WAT(t, tc.module), "", l)
				if err != nil {
					assert.ErrorIs(t, err, tc.want, "Compile(%s.wat) on %s", tc.module, s.eng.Name())
					s.stillWorks(t)
					return
				}
				_ = m.Close(context.Background())
			}
			m := s.compile(t, tc.module, l)
			start := time.Now()
			out, err := m.Call(context.Background(), tc.export, []byte("input"))
			elapsed := time.Since(start)
			require.Error(t, err, "Call(%s) on %s.wat returned %q, want an error", tc.export, tc.module, out)
			assert.Nil(t, out, "Call(%s) on %s.wat returned output with its error", tc.export, tc.module)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want, "Call(%s) on %s.wat", tc.export, tc.module)
			}
			if tc.trap {
				var te *engine.TrapError
				if assert.ErrorAs(t, err, &te, "Call(%s) on %s.wat: want a *TrapError", tc.export, tc.module) {
					assert.Equal(t, tc.wantTrap, te.Export, "TrapError.Export of %s.wat", tc.module)
				}
			}
			assert.Less(t, elapsed, 20*l.Deadline, "Call(%s) on %s.wat took %s with a deadline of %s", tc.export, tc.module, elapsed, l.Deadline)
			// The module stays usable for the next call, which fails the same way.
			_, err2 := m.Call(context.Background(), tc.export, []byte("input"))
			if tc.want != nil {
				assert.ErrorIs(t, err2, tc.want, "second Call(%s) on %s.wat", tc.export, tc.module)
			}
			s.stillWorks(t)
		})
	}
}

func packed(ptr, n uint32) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, uint64(ptr)<<32|uint64(n))
	return b
}

func (s *suite) outputBounds(t *testing.T) {
	const memBytes = 2 * 65536 // raw_output.wat declares 2 pages and never grows
	m := s.compile(t, "raw_output", Limits)
	tests := []struct {
		name string
		ptr  uint32
		n    uint32
		want error
	}{
		{"in bounds", 0, 16, nil},
		{"ends at the end of memory", memBytes - 8, 8, nil},
		{"empty at the end of memory", memBytes, 0, nil},
		{"one byte past the end", memBytes - 8, 9, engine.ErrOutput},
		{"pointer past the end", memBytes + 1, 0, engine.ErrOutput},
		{"32-bit sum wraps to a small value", 0xFFFFFFF0, 0x20, engine.ErrOutput},
		{"32-bit sum wraps to zero", 0x80000000, 0x80000000, engine.ErrOutput},
		{"length over the output cap", 0, uint32(Limits.OutputBytes) + 1, engine.ErrOutput},
		{"maximum pointer and length", 0xFFFFFFFF, 0xFFFFFFFF, engine.ErrOutput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.Call(context.Background(), abi.ExportRender, packed(tc.ptr, tc.n))
			if tc.want == nil {
				require.NoError(t, err, "Call(render) returning ptr=%#x len=%#x", tc.ptr, tc.n)
				assert.Len(t, got, int(tc.n), "Call(render) returning ptr=%#x len=%#x", tc.ptr, tc.n)
				return
			}
			assert.ErrorIs(t, err, tc.want, "Call(render) returning ptr=%#x len=%#x", tc.ptr, tc.n)
			assert.Nil(t, got, "Call(render) returning ptr=%#x len=%#x gave output", tc.ptr, tc.n)
		})
	}
	s.stillWorks(t)
}

func (s *suite) guestOutput(t *testing.T) {
	m := s.compile(t, "noisy_trap", Limits)
	for _, in := range []string{"diagnostic line\n", strings.Repeat("0123456789", 1000)} {
		_, err := m.Call(context.Background(), abi.ExportRender, []byte(in))
		var te *engine.TrapError
		require.ErrorAs(t, err, &te, "Call(render) on noisy_trap.wat with %d bytes", len(in))
		want := in + in // written to stderr, then to stdout
		if len(want) > Limits.StderrBytes {
			want = want[:Limits.StderrBytes]
		}
		assert.True(t, strings.HasPrefix(te.Output, want), "TrapError.Output = %.80q..., want it to start with %.80q...", te.Output, want)
		assert.LessOrEqual(t, len(te.Output), Limits.StderrBytes+64, "TrapError.Output holds %d bytes with a cap of %d", len(te.Output), Limits.StderrBytes)
	}
}

func (s *suite) sandbox(t *testing.T) {
	m := s.compile(t, "sandbox_probe", Limits)
	first, err := m.Call(context.Background(), abi.ExportRender, nil)
	require.NoError(t, err, "Call(render) on sandbox_probe.wat")
	require.Len(t, first, 48, "Call(render) on sandbox_probe.wat")
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(first[off:]) }
	const ebadf = 8
	assert.Zero(t, u32(0), "environ count")
	assert.Zero(t, u32(4), "environ bytes")
	assert.Zero(t, u32(8), "argc")
	assert.Zero(t, u32(12), "argv bytes")
	assert.EqualValues(t, ebadf, u32(16), "path_open errno with no preopens")
	assert.Zero(t, u32(20), "fd_read errno on stdin")
	assert.Zero(t, u32(24), "bytes read from stdin")
	assert.EqualValues(t, ebadf, u32(28), "fd_prestat_get(3) errno with no preopens")
	wall := time.Unix(0, int64(binary.LittleEndian.Uint64(first[32:])))
	assert.True(t, wall.Before(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)), "the guest's wall clock reads %s, want a fixed fake time, not the real one", wall)
	second, err := m.Call(context.Background(), abi.ExportRender, nil)
	require.NoError(t, err, "second Call(render) on sandbox_probe.wat")
	assert.Equal(t, first, second, "two calls of sandbox_probe.wat must see the same clock and random bytes")
}

func (s *suite) hammer(t *testing.T) {
	m := s.compile(t, "ok", Limits)
	const goroutines, calls = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				in := fmt.Sprintf("goroutine %d call %d %s", g, i, strings.Repeat("z", (g*calls+i)%300))
				got, err := m.Call(context.Background(), abi.ExportRender, []byte(in))
				if err != nil {
					errs <- fmt.Errorf("Call(render, %q): %w", in, err)
					continue
				}
				if string(got) != s.fresh+in {
					errs <- fmt.Errorf("Call(render, %q) = %q, want %q: state leaked or answers crossed", in, got, s.fresh+in)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func (s *suite) goPlugin(t *testing.T) {
	m, err := s.eng.Compile(context.Background(), GoPlugin(t), "", engine.Limits{})
	require.NoError(t, err, "Compile(goplugin.wasm) on %s", s.eng.Name())
	t.Cleanup(func() { assert.NoError(t, m.Close(context.Background()), "Close(goplugin)") })
	raw, err := m.Call(context.Background(), abi.ExportManifest, nil)
	require.NoError(t, err, "Call(manifest) on goplugin.wasm")
	var man abi.Manifest
	require.NoError(t, json.Unmarshal(raw, &man), "decode manifest %q", raw)
	assert.Equal(t, "goplugin", man.Harness, "manifest harness")
	assert.Equal(t, abi.Version, man.ABIVersion, "manifest ABI version")

	req := Request(15 << 10)
	out1, err := m.Call(context.Background(), abi.ExportRender, req)
	require.NoError(t, err, "Call(render, %d bytes) on goplugin.wasm", len(req))
	var plan abi.Plan
	require.NoError(t, json.Unmarshal(out1, &plan), "decode plan %.200q", out1)
	assert.Equal(t, fmt.Sprintf("received %d bytes", len(req)), plan.Prompt, "plan prompt")
	var decoded abi.Request
	require.NoError(t, json.Unmarshal(req, &decoded), "decode request")
	assert.Len(t, plan.Files, len(decoded.Servers)+len(decoded.Skills), "one file per server and skill")
	out2, err := m.Call(context.Background(), abi.ExportRender, req)
	require.NoError(t, err, "second Call(render) on goplugin.wasm")
	assert.True(t, bytes.Equal(out1, out2), "two renders of the same request differ")

	// The Go runtime cannot start in 48 pages: its failed memory.grow ends in a fatal error
	// that must be reported as the memory limit.
	// An engine that pre-initializes modules runs _initialize in Compile, where it then fails.
	small, err := s.eng.Compile(context.Background(), GoPlugin(t), "", engine.Limits{MemoryPages: 48})
	if err == nil {
		defer small.Close(context.Background())
		_, err = small.Call(context.Background(), abi.ExportRender, req)
	}
	assert.ErrorIs(t, err, engine.ErrMemoryLimit, "Call(render) on goplugin.wasm with 48 pages")
	var te *engine.TrapError
	if assert.ErrorAs(t, err, &te, "Call(render) on goplugin.wasm with 48 pages") {
		assert.NotEmpty(t, te.Output, "the Go runtime's fatal error must reach TrapError.Output")
	}
}

func (s *suite) cancel(t *testing.T) {
	m := s.compile(t, "ok", Limits)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Call(ctx, abi.ExportRender, []byte("x"))
	assert.ErrorIs(t, err, context.Canceled, "Call(render) with a cancelled context")

	long := Limits
	long.Deadline = time.Minute
	spin := s.compile(t, "loop_render", long)
	// The caller's deadline, shorter than the module's, stops the guest.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = spin.Call(ctx, abi.ExportRender, nil)
	assert.ErrorIs(t, err, engine.ErrTimeout, "Call(render) on loop_render.wat under a caller deadline of 100ms")
	assert.Less(t, time.Since(start), 10*time.Second, "a caller's deadline must stop a spinning guest")
}

func (s *suite) moduleClose(t *testing.T) {
	spin := Limits
	spin.Deadline = spinDeadline
	m, err := s.eng.Compile(context.Background(), WAT(t, "loop_render"), "", spin)
	require.NoError(t, err, "Compile(loop_render.wat)")
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), abi.ExportRender, nil)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, m.Close(context.Background()), "Close(module) with a call in flight")
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, engine.ErrClosed) || errors.Is(err, engine.ErrTimeout), "in-flight Call after Close = %v, want ErrClosed or ErrTimeout", err)
	case <-time.After(20 * spinDeadline):
		t.Fatal("in-flight Call did not return after Close")
	}
	_, err = m.Call(context.Background(), abi.ExportRender, nil)
	assert.ErrorIs(t, err, engine.ErrClosed, "Call after Close")
	s.stillWorks(t)
}
