// Package preinit pre-initializes reactor plugins: Snapshot runs a module's _initialize once, in
// the engines' sandbox, and returns an equivalent module whose globals and linear memory already
// hold the state _initialize left, with _initialize no longer exported. Instantiating the result
// is copying its data segments; the Go runtime start-up and package init functions of a Go
// plugin (several milliseconds of CPU) are not run again on every call.
//
// An engine calls Snapshot in Compile, after the size check and before compiling; every call
// still runs in a fresh instance, now one that starts in the post-initialization state, so the
// isolation guarantee of host/engine is unchanged.
//
// Warm-up: between _initialize and the snapshot, Snapshot renders a synthetic request built from
// the plugin's own manifest (Options.Warmups times, no caller data in it) and discards the plans.
// A Go runtime's first render grows its heap, which cost a fresh pre-initialized instance of the
// claude plugin 1.1 ms against 0.14 ms for the renders after it (wasmtime, pooled memory); the
// snapshot now holds the grown heap, so every instance starts warm.
//
// What is carried over: the value of every defined global of type i32, i64, f32 or f64 (as a
// constant initializer), the whole linear memory (as active data segments over its non-zero
// bytes, with the memory's minimum raised to its size after _initialize), every other section as
// it was. What is not: tables (a reactor's _initialize must not change them; Go's never does),
// the sandbox's clock and random source, which start again from their fixed initial state in
// every instance of the result (see Snapshot).
//
// Snapshot refuses modules it cannot carry over faithfully: a start section, imported memories,
// tables or globals, more than one memory, shared or 64-bit memory, passive data segments,
// mutable globals of a reference or vector type. It holds no state and is safe for concurrent
// use; each call owns its own wazero runtime.
package preinit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/capmem"
	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// ErrUnsupported is wrapped by the errors for valid modules Snapshot cannot pre-initialize
// faithfully (a start section, passive data segments, a mutable global of a reference or vector
// type, an export under GlobalExportPrefix). An engine may run such a module unchanged.
var ErrUnsupported = errors.New("module cannot be pre-initialized")

// GlobalExportPrefix starts the reserved export names under which Snapshot reads the defined
// globals after _initialize ("loadout.preinit.global.N" for defined global N). A module that
// already exports a name with this prefix is refused. The result does not carry these exports.
const GlobalExportPrefix = "loadout.preinit.global."

// DefaultMergeGap is the default Options.MergeGap.
const DefaultMergeGap = 64

// Options configure Snapshot.
type Options struct {
	// Limits bound the run of _initialize exactly as an engine bounds it: ModuleBytes (input
	// and output), MemoryPages and Deadline (instantiation plus _initialize), StderrBytes. Zero
	// fields come from engine.DefaultLimits. Pass the limits given to Compile.
	Limits engine.Limits
	// MergeGap joins two non-zero runs of memory into one data segment when fewer than MergeGap
	// zero bytes separate them, trading a few zero bytes for fewer segments. 0 means
	// DefaultMergeGap; a negative value never merges.
	MergeGap int
	// Interpreter runs _initialize on wazero's interpreter instead of its compiler. Snapshot of a
	// 3 MB Go plugin then takes about a quarter of the time (compiling dominates), but
	// _initialize runs several times slower against the same Deadline. The result is the same
	// bytes either way.
	Interpreter bool
	// Warmups is how many renders of a synthetic request (built from the plugin's manifest, see
	// warmUp) run after _initialize and before the snapshot, so that instances start with the
	// heap a render needs. 0 means DefaultWarmups; a negative value runs none. A module whose
	// warm-up does not complete (an export is missing, a render traps or times out) is
	// snapshotted right after _initialize instead.
	Warmups int
}

// Snapshot returns wasm pre-initialized: an equivalent module whose globals and memory hold the
// state right after _initialize and that no longer exports _initialize. A module without
// _initialize comes back unchanged (the same slice). The result is deterministic: the same
// input and options give the same bytes, because _initialize runs in the sandbox of
// host/engine/internal/sandbox (no environment, no arguments, no preopens, a fake clock and a
// fixed random seed).
//
// Caveat: an instance of the result starts the sandbox's fake clock and random source from
// their initial state, whereas an instance of wasm that ran _initialize has consumed a few
// clock readings and random bytes. A guest whose output depends on the clock or on random bytes
// it draws after _initialize sees different (still deterministic) values.
//
// Errors: errors.Is holds for engine.ErrModuleSize (input or result over Limits.ModuleBytes),
// engine.ErrMemoryLimit (declared memory over the cap, or _initialize grew past it),
// engine.ErrTimeout (_initialize ran past Limits.Deadline), engine.ErrLink (imports outside
// the sandbox); a trap, panic or proc_exit in _initialize is an *engine.TrapError.
func Snapshot(ctx context.Context, wasm []byte, opts Options) ([]byte, error) {
	limits := sandbox.Limits(opts.Limits)
	if len(wasm) > limits.ModuleBytes {
		return nil, fmt.Errorf("preinit: module of %d bytes over the cap of %d: %w", len(wasm), limits.ModuleBytes, engine.ErrModuleSize)
	}
	m, err := parse(wasm)
	if err != nil {
		return nil, fmt.Errorf("preinit: %w", err)
	}
	initIdx := -1
	for i, e := range m.exports {
		if strings.HasPrefix(e.name, GlobalExportPrefix) {
			return nil, fmt.Errorf("preinit: export %q uses the reserved prefix %q: %w", e.name, GlobalExportPrefix, ErrUnsupported)
		}
		if e.name == abi.ExportInitialize && e.kind == wasmbin.KindFunc {
			initIdx = i
		}
	}
	if initIdx < 0 {
		return wasm, nil
	}
	if err := m.check(limits); err != nil {
		return nil, fmt.Errorf("preinit: %w", err)
	}

	// Run _initialize in a copy that also exports every global Snapshot can carry over.
	probe := append([]export(nil), m.exports...)
	var carried []int
	for i, g := range m.globals {
		switch g.typ {
		case wasmbin.TypeI32, wasmbin.TypeI64, wasmbin.TypeF32, wasmbin.TypeF64:
			carried = append(carried, i)
			probe = append(probe, export{name: GlobalExportPrefix + strconv.Itoa(i), kind: wasmbin.KindGlobal, idx: uint32(i)})
		}
	}
	warmups := opts.Warmups
	if warmups == 0 {
		warmups = DefaultWarmups
	}
	probeWasm := encode(m.sections, map[byte][]byte{wasmbin.SecExport: encodeExports(probe)})
	st, err := run(ctx, probeWasm, m, carried, limits, opts.Interpreter, max(warmups, 0))
	if errors.Is(err, errWarmup) {
		st, err = run(ctx, probeWasm, m, carried, limits, opts.Interpreter, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("preinit: %w", err)
	}

	globals := append([]global(nil), m.globals...)
	for j, i := range carried {
		globals[i].init = constFor(globals[i].typ, st.globals[j])
	}
	exports := append(append([]export(nil), m.exports[:initIdx]...), m.exports[initIdx+1:]...)
	replace := map[byte][]byte{
		wasmbin.SecGlobal: encodeGlobals(globals),
		wasmbin.SecExport: encodeExports(exports),
	}
	if len(globals) == 0 {
		delete(replace, wasmbin.SecGlobal)
	}
	if m.memory != nil {
		mem := *m.memory
		mem.min = uint32(len(st.memory) / pageSize)
		segs := segments(st.memory, opts.MergeGap)
		if m.dataCount {
			// Code may name data segments (data.drop, memory.init) by index up to the
			// declared count: keep that many, padding with empty segments, which change
			// nothing (active segments are dropped once instantiation has copied them).
			for uint32(len(segs)) < m.dataSegs {
				segs = append(segs, segment{})
			}
		}
		replace[wasmbin.SecMemory] = encodeMemory(mem)
		if len(segs) > 0 || m.hasSection(wasmbin.SecData) {
			replace[wasmbin.SecData] = encodeData(segs)
		}
		if m.dataCount {
			replace[wasmbin.SecDataCount] = wasmbin.AppendULEB(nil, uint64(len(segs)))
		}
	}
	out := encode(m.sections, replace)
	if len(out) > limits.ModuleBytes {
		return nil, fmt.Errorf("preinit: pre-initialized module of %d bytes over the cap of %d: %w", len(out), limits.ModuleBytes, engine.ErrModuleSize)
	}
	return out, nil
}

const pageSize = 65536

// Check reads wasm with Snapshot's strict reader without running anything: it refuses a
// malformed binary, one whose vector counts or sizes the input cannot hold, a function with
// more than MaxLocals locals, and what no engine links (imports other than functions, several,
// shared or 64-bit memories). wazero v1.12 allocates a vector's declared length before reading
// it, so an engine should call Check before its runtime decodes untrusted bytes: a 373-byte
// module declaring a function type with 2^31 parameters makes wazero's CompileModule ask for
// 24 GiB and the Go runtime abort the whole process. Check is safe for concurrent use.
func Check(wasm []byte) error {
	if _, err := parse(wasm); err != nil {
		return fmt.Errorf("preinit: %w", err)
	}
	return nil
}

func (m *module) hasSection(id byte) bool {
	for _, s := range m.sections {
		if s.id == id {
			return true
		}
	}
	return false
}

// check refuses what Snapshot cannot carry over (the parser already refused imported
// memories, tables and globals, and unusable memories).
func (m *module) check(limits engine.Limits) error {
	if m.hasStart {
		return fmt.Errorf("module has a start function: %w", ErrUnsupported)
	}
	if m.passive {
		return fmt.Errorf("module has passive data segments: %w", ErrUnsupported)
	}
	for i, g := range m.globals {
		if g.mut && (g.typ == wasmbin.TypeV128 || g.typ == wasmbin.TypeFuncref || g.typ == wasmbin.TypeExternref) {
			return fmt.Errorf("global %d is a mutable %#x: %w", i, g.typ, ErrUnsupported)
		}
	}
	if m.memory != nil {
		if err := sandbox.CheckMemory(uint64(m.memory.min), uint64(m.memory.max), m.memory.hasMax, limits.MemoryPages); err != nil {
			return err
		}
	}
	return nil
}

// segments returns active data segments covering the non-zero bytes of mem, joining runs
// separated by fewer than gap zero bytes. The segments alias mem.
func segments(mem []byte, gap int) []segment {
	if gap == 0 {
		gap = DefaultMergeGap
	}
	var segs []segment
	i := 0
	for {
		// Skip zeros.
		for i < len(mem) && mem[i] == 0 {
			i++
		}
		if i == len(mem) {
			return segs
		}
		start := i
		end := i // end of the last non-zero byte + 1
		for i < len(mem) {
			if mem[i] != 0 {
				i++
				end = i
				continue
			}
			z := i
			for i < len(mem) && mem[i] == 0 {
				i++
			}
			if i == len(mem) || i-z >= gap {
				break
			}
		}
		segs = append(segs, segment{off: uint32(start), data: mem[start:end]})
		i = end
	}
}

// state is what _initialize left: the carried globals' raw values and the linear memory.
type state struct {
	globals []uint64
	memory  []byte
}

// stateKey carries the running instance's *sandbox.Sys to the WASI host functions.
type stateKey struct{}

// run instantiates probe (m with its globals exported) on a private wazero runtime linked to
// the sandbox, runs _initialize and then warmups warm-up renders under the deadline and the page
// cap, and reads the state. A warm-up that does not complete returns an error wrapping errWarmup.
func run(ctx context.Context, probe []byte, m *module, carried []int, limits engine.Limits, interpreter bool, warmups int) (*state, error) {
	rc := wazero.NewRuntimeConfig()
	if interpreter {
		rc = wazero.NewRuntimeConfigInterpreter()
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc.
		WithCloseOnContextDone(true).
		WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(context.WithoutCancel(ctx))
	if err := linkSandbox(ctx, rt); err != nil {
		return nil, err
	}
	cm, err := rt.CompileModule(ctx, probe)
	if err != nil {
		return nil, fmt.Errorf("compile: %w: %w", engine.ErrABI, err)
	}
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		if err := sandbox.CheckImport(mod, name, sandboxTypes(def.ParamTypes()), sandboxTypes(def.ResultTypes())); err != nil {
			return nil, err
		}
	}
	if def, ok := cm.ExportedFunctions()[abi.ExportInitialize]; !ok || len(def.ParamTypes()) != 0 || len(def.ResultTypes()) != 0 {
		return nil, fmt.Errorf("export %q must have type () -> (): %w", abi.ExportInitialize, engine.ErrABI)
	}

	sysState := sandbox.New(limits.StderrBytes)
	alloc := &capmem.Allocator{Limit: uint64(limits.MemoryPages) * pageSize}
	rctx := experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, sysState), alloc)
	phase, done := context.WithTimeout(rctx, limits.Deadline)
	defer done()
	mod, err := rt.InstantiateModule(phase, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		return nil, fail(ctx, phase, limits, err, sysState, alloc, "instantiate")
	}
	if _, err := mod.ExportedFunction(abi.ExportInitialize).Call(phase); err != nil {
		return nil, fail(ctx, phase, limits, err, sysState, alloc, abi.ExportInitialize)
	}
	if err := phase.Err(); err != nil {
		return nil, fail(ctx, phase, limits, err, sysState, alloc, abi.ExportInitialize)
	}
	if warmups > 0 {
		if err := warmUp(phase, mod, limits.OutputBytes, warmups); err != nil {
			return nil, err
		}
	}
	st := &state{globals: make([]uint64, len(carried))}
	for j, i := range carried {
		g := mod.ExportedGlobal(GlobalExportPrefix + strconv.Itoa(i))
		if g == nil {
			return nil, fmt.Errorf("global %d not exported by the probe", i)
		}
		st.globals[j] = g.Get()
	}
	if m.memory != nil {
		mem := mod.Memory()
		if mem == nil {
			return nil, fmt.Errorf("the instance has no memory")
		}
		view, ok := mem.Read(0, mem.Size())
		if !ok {
			return nil, fmt.Errorf("read %d bytes of memory", mem.Size())
		}
		st.memory = bytes.Clone(view)
	}
	return st, nil
}

// fail maps an error of instantiation or _initialize to the engines' typed errors.
func fail(ctx, phase context.Context, limits engine.Limits, err error, s *sandbox.Sys, alloc *capmem.Allocator, what string) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case phase.Err() != nil:
		return fmt.Errorf("%s after %s: %w", what, limits.Deadline, engine.ErrTimeout)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return fmt.Errorf("%s after %s: %w", what, limits.Deadline, engine.ErrTimeout)
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%s: %w", what, context.Canceled)
		}
		return sandbox.Trap(what, fmt.Sprintf("proc_exit(%d)", exit.ExitCode()), s.Output(), alloc.Hit)
	}
	if what == "instantiate" && !alloc.Hit {
		return fmt.Errorf("instantiate: %w: %w", engine.ErrLink, err)
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return sandbox.Trap(what, msg, s.Output(), alloc.Hit)
}

// linkSandbox defines the sandbox's WASI host module on rt, as the wazero engine does: every
// WASI preview-1 function, served by the *sandbox.Sys found in the calling context.
func linkSandbox(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(sandbox.Module)
	for _, name := range sandbox.Names() {
		sig := sandbox.Signatures[name]
		nparams, nresults := len(sig.Params), len(sig.Results)
		fn := api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			s, ok := ctx.Value(stateKey{}).(*sandbox.Sys)
			if !ok {
				panic(fmt.Errorf("%s.%s called outside Snapshot", sandbox.Module, name))
			}
			errno, err := s.Call(name, mod.Memory(), stack[:nparams])
			if err != nil {
				var exit *sandbox.Exit
				if errors.As(err, &exit) {
					_ = mod.CloseWithExitCode(ctx, exit.Code)
					panic(sys.NewExitError(exit.Code))
				}
				panic(err)
			}
			if nresults == 1 {
				stack[0] = uint64(errno)
			}
		})
		params, results := valueTypes(sig.Params), valueTypes(sig.Results)
		b.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate the sandbox: %w", err)
	}
	return nil
}

func valueTypes(ts []sandbox.ValueType) []api.ValueType {
	out := make([]api.ValueType, len(ts))
	for i, t := range ts {
		out[i] = api.ValueType(t)
	}
	return out
}

func sandboxTypes(ts []api.ValueType) []sandbox.ValueType {
	out := make([]sandbox.ValueType, len(ts))
	for i, t := range ts {
		out[i] = sandbox.ValueType(t)
	}
	return out
}
