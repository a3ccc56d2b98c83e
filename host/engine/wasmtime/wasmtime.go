//go:build wasmtime

// Package wasmtime runs renderer plugins on Wasmtime through wasmtime-go (cgo). It is built only
// with the build tag "wasmtime", so the default `CGO_ENABLED=0 go build ./...` never links it.
//
// An Engine owns one Wasmtime engine (epoch interruption and NaN canonicalisation on), one
// linker holding the sandbox's WASI functions, and a goroutine that advances the epoch every
// Tick. Every Module it compiles shares them. Engine and Module are safe for concurrent use.
//
// Isolation: every Module.Call creates a new store, instantiates the module in it, runs
// _initialize, calls the export once and drops the store, so nothing a call leaves in memory or
// globals reaches the next one. Instances use Wasmtime's default on-demand allocator with
// copy-on-write memory images: wasmtime-go v39 does not expose the pooling allocator, and
// reaching into its private config field to set it up is not worth the gain (see
// docs/PERFORMANCE.md for the figures).
//
// Deadlines: each store gets an epoch deadline for instantiation with _initialize, then a new
// one for the call; a guest past it traps with an interrupt, reported as engine.ErrTimeout. A
// caller's context deadline, when earlier, shortens it; a cancellation without a deadline is
// seen only between phases, because Wasmtime can interrupt a running guest only by epoch.
//
// Memory: a store limiter caps linear memory at the page cap, so memory.grow past it returns -1
// to the guest. Wasmtime does not tell the host a grow was refused: when a failing guest's
// memory is within one page of the cap, the error also matches engine.ErrMemoryLimit.
package wasmtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Interface guards.
var (
	_ engine.Engine = (*Engine)(nil)
	_ engine.Module = (*Module)(nil)
)

// Tick is how often the epoch advances; deadlines are rounded up to it.
const Tick = 2 * time.Millisecond

// cacheVersion names the Wasmtime build and settings a serialized module depends on.
const cacheVersion = "wasmtime-go/v39.0.1 epoch nan-canonical relaxed-simd-deterministic " + runtime.GOOS + "/" + runtime.GOARCH

// Config configures an Engine. The zero value is valid: nothing is cached on disk.
type Config struct {
	// Cache, when set, keeps compiled modules serialized on disk, keyed by the sha256 of the
	// module and the engine's settings, so a cold CLI start deserializes instead of
	// recompiling. Only an entry that authenticates is deserialized (codecache); any other is
	// compiled again and replaced.
	Cache *codecache.Cache
	// Slots is how many instances may exist at once (DefaultSlots when zero or less); a call
	// beyond them waits for one to finish, so that a burst of requests cannot map an unbounded
	// number of linear memories.
	Slots int
}

// DefaultSlots is Config.Slots when unset.
const DefaultSlots = 64

// Engine compiles and runs plugins on Wasmtime. Create it with New; it is safe for concurrent use.
type Engine struct {
	cfg    Config
	wt     *wasmtime.Engine
	linker *wasmtime.Linker
	slots  chan struct{} // one token per instance that may exist, held for a call's store
	stop   chan struct{}
	ticker sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex
	modules map[*Module]struct{} // open modules, closed by Close
}

// New returns an Engine. The caller closes it.
func New(_ context.Context, cfg Config) (*Engine, error) {
	wc := wasmtime.NewConfig()
	wc.SetEpochInterruption(true)
	wc.SetCraneliftNanCanonicalization(true)
	wc.SetWasmRelaxedSIMDDeterministic(true)
	wc.SetWasmThreads(false)
	slots := cfg.Slots
	if slots <= 0 {
		slots = DefaultSlots
	}
	wt := wasmtime.NewEngineWithConfig(wc)
	linker := wasmtime.NewLinker(wt)
	if err := defineSandbox(linker); err != nil {
		linker.Close()
		wt.Close()
		return nil, err
	}
	e := &Engine{cfg: cfg, wt: wt, linker: linker, slots: make(chan struct{}, slots), stop: make(chan struct{}), modules: map[*Module]struct{}{}}
	e.ticker.Add(1)
	go e.tick()
	return e, nil
}

func (e *Engine) tick() {
	defer e.ticker.Done()
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.wt.IncrementEpoch()
		}
	}
}

// Name returns "wasmtime".
func (e *Engine) Name() string { return "wasmtime" }

// Close closes every open module (waiting for their calls in flight, which the epoch still
// interrupts at their deadlines), then stops the epoch goroutine and releases the engine.
func (e *Engine) Close(ctx context.Context) error {
	e.once.Do(func() {
		e.mu.Lock()
		open := make([]*Module, 0, len(e.modules))
		for m := range e.modules {
			open = append(open, m)
		}
		e.mu.Unlock()
		for _, m := range open {
			_ = m.Close(ctx)
		}
		close(e.stop)
		e.ticker.Wait()
		e.linker.Close()
		e.wt.Close()
	})
	return nil
}

// call is the state of one Module.Call, reachable from the store's data.
type call struct {
	sys  *sandbox.Sys
	exit *sandbox.Exit
}

// memory adapts a guest memory, as seen during one host call, to sandbox.Memory.
type memory []byte

func (m memory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

func (m memory) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m)) {
		return false
	}
	copy(m[off:], b)
	return true
}

func valTypes(ts []sandbox.ValueType) []*wasmtime.ValType {
	out := make([]*wasmtime.ValType, len(ts))
	for i, t := range ts {
		if t == sandbox.I64 {
			out[i] = wasmtime.NewValType(wasmtime.KindI64)
		} else {
			out[i] = wasmtime.NewValType(wasmtime.KindI32)
		}
	}
	return out
}

func sandboxTypes(ts []*wasmtime.ValType) []sandbox.ValueType {
	out := make([]sandbox.ValueType, len(ts))
	for i, t := range ts {
		switch t.Kind() {
		case wasmtime.KindI32:
			out[i] = sandbox.I32
		case wasmtime.KindI64:
			out[i] = sandbox.I64
		}
	}
	return out
}

// defineSandbox defines the WASI functions every plugin links against.
func defineSandbox(l *wasmtime.Linker) error {
	for _, name := range sandbox.Names() {
		sig := sandbox.Signatures[name]
		ty := wasmtime.NewFuncType(valTypes(sig.Params), valTypes(sig.Results))
		nresults := len(sig.Results)
		err := l.FuncNew(sandbox.Module, name, ty, func(caller *wasmtime.Caller, args []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			c, ok := caller.Data().(*call)
			if !ok {
				return nil, wasmtime.NewTrap(name + " called outside a loadout call")
			}
			var mem memory
			if ext := caller.GetExport(abi.ExportMemory); ext != nil && ext.Memory() != nil {
				mem = ext.Memory().UnsafeData(caller)
			}
			raw := make([]uint64, len(args))
			for i, a := range args {
				if a.Kind() == wasmtime.KindI64 {
					raw[i] = uint64(a.I64())
				} else {
					raw[i] = uint64(uint32(a.I32()))
				}
			}
			errno, err := c.sys.Call(name, mem, raw)
			if err != nil {
				var exit *sandbox.Exit
				if errors.As(err, &exit) {
					c.exit = exit
					return nil, wasmtime.NewTrap(exit.Error())
				}
				return nil, wasmtime.NewTrap(err.Error())
			}
			if nresults == 0 {
				return nil, nil
			}
			return []wasmtime.Val{wasmtime.ValI32(int32(errno))}, nil
		})
		if err != nil {
			return fmt.Errorf("define %s.%s: %w", sandbox.Module, name, err)
		}
	}
	return nil
}

// Compile checks the module's size, compiles it (or loads it from the cache), then checks its
// imports, exports and memory before anything is instantiated.
func (e *Engine) Compile(ctx context.Context, wasm []byte, digest string, limits engine.Limits) (_ engine.Module, err error) {
	if limits, err = sandbox.CheckModule(wasm, limits); err != nil {
		return nil, err
	}
	mod, err := e.load(wasm, digest)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			mod.Close()
		}
	}()
	for _, imp := range mod.Imports() {
		name := ""
		if imp.Name() != nil {
			name = *imp.Name()
		}
		ft := imp.Type().FuncType()
		if ft == nil {
			return nil, fmt.Errorf("import %s.%s: a plugin may import only functions: %w", imp.Module(), name, engine.ErrLink)
		}
		if err := sandbox.CheckImport(imp.Module(), name, sandboxTypes(ft.Params()), sandboxTypes(ft.Results())); err != nil {
			return nil, err
		}
	}
	funcs := map[string]*wasmtime.FuncType{}
	var mem *wasmtime.MemoryType
	for _, exp := range mod.Exports() {
		if ft := exp.Type().FuncType(); ft != nil {
			funcs[exp.Name()] = ft
		}
		if mt := exp.Type().MemoryType(); mt != nil && exp.Name() == abi.ExportMemory {
			mem = mt
		}
	}
	for _, name := range []string{abi.ExportABIVersion, abi.ExportAlloc, abi.ExportManifest, abi.ExportRender, abi.ExportInitialize} {
		ft, ok := funcs[name]
		var params, results []sandbox.ValueType
		if ok {
			params, results = sandboxTypes(ft.Params()), sandboxTypes(ft.Results())
		}
		if err := sandbox.CheckExport(name, ok, params, results); err != nil {
			return nil, err
		}
	}
	if mem == nil {
		return nil, fmt.Errorf("missing export %q: %w", abi.ExportMemory, engine.ErrABI)
	}
	if mem.Is64() || mem.IsShared() {
		return nil, fmt.Errorf("memory must be a 32-bit unshared memory: %w", engine.ErrABI)
	}
	hasMax, maxPages := mem.Maximum()
	if err := sandbox.CheckMemory(mem.Minimum(), maxPages, hasMax, limits.MemoryPages); err != nil {
		return nil, err
	}
	_, hasInit := funcs[abi.ExportInitialize]
	m := &Module{e: e, mod: mod, limits: limits, hasInit: hasInit}
	e.mu.Lock()
	e.modules[m] = struct{}{}
	e.mu.Unlock()
	return m, nil
}

// load compiles wasm, or deserializes it from the cache, where it is keyed on digest (the
// verified pin; "" hashes wasm here). The bytes deserialized are the bytes the cache
// authenticated, read into memory first: nothing is mapped from the file afterwards.
func (e *Engine) load(wasm []byte, digest string) (*wasmtime.Module, error) {
	var name string
	if c := e.cfg.Cache; c != nil {
		if digest == "" {
			sum := sha256.Sum256(wasm)
			digest = "sha256:" + hex.EncodeToString(sum[:])
		}
		name = codecache.Name(cacheVersion, digest)
		if code, err := c.Get(name); err == nil {
			if mod, err := wasmtime.NewModuleDeserialize(e.wt, code); err == nil {
				return mod, nil
			}
		}
	}
	mod, err := wasmtime.NewModule(e.wt, wasm)
	if err != nil {
		return nil, fmt.Errorf("compile: %w: %w", engine.ErrABI, err)
	}
	if name != "" {
		// The cache only saves time: a module that cannot be stored is still returned.
		if b, err := mod.Serialize(); err == nil {
			_ = e.cfg.Cache.Put(name, b)
		}
	}
	return mod, nil
}

// Module is a compiled plugin; every Call runs in a fresh store. It is safe for concurrent use.
type Module struct {
	e       *Engine
	mod     *wasmtime.Module
	limits  engine.Limits
	hasInit bool
	// abiChecked is set once an instance reported abi.Version: every instance starts from the
	// same state in the same sandbox, so every other one would report the same.
	abiChecked atomic.Bool

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
}

// Close refuses new calls, waits for the calls in flight (each ends by its deadline at the
// latest) and releases the module.
func (m *Module) Close(context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.e.mu.Lock()
	delete(m.e.modules, m)
	m.e.mu.Unlock()
	m.inflight.Wait()
	m.mod.Close()
	return nil
}

func (m *Module) enter() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return engine.ErrClosed
	}
	m.inflight.Add(1)
	return nil
}

// ticks returns the epoch deadline for a phase of deadline d, or the caller's deadline when
// it comes first.
func (m *Module) ticks(ctx context.Context, d time.Duration) uint64 {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		d = max(time.Until(dl), 0)
	}
	return uint64(d/Tick) + 1
}

// Call instantiates the module in a new store, runs _initialize, checks the ABI version (until
// one instance passed), hands input to the guest (for abi.ExportRender) and returns a copy of
// the bytes the export returned.
func (m *Module) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if err := sandbox.CheckCall(export); err != nil {
		return nil, err
	}
	if err := m.enter(); err != nil {
		return nil, fmt.Errorf("call %s: %w", export, err)
	}
	defer m.inflight.Done()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("call %s: %w", export, err)
	}
	// A store holds a slot from instantiation until it is closed.
	select {
	case m.e.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("call %s: %w", export, ctx.Err())
	}
	defer func() { <-m.e.slots }()
	c := &call{sys: sandbox.New(m.limits.StderrBytes)}
	store := wasmtime.NewStoreWithData(m.e.wt, c)
	defer store.Close()
	memCap := int64(m.limits.MemoryPages) * 65536
	store.Limiter(memCap, -1, -1, -1, 1)

	store.SetEpochDeadline(m.ticks(ctx, m.limits.Deadline))
	inst, err := m.e.linker.Instantiate(store, m.mod)
	if err != nil {
		return nil, m.fail(ctx, store, nil, abi.ExportInitialize, err, c)
	}
	ext := inst.GetExport(store, abi.ExportMemory)
	if ext == nil || ext.Memory() == nil {
		return nil, fmt.Errorf("missing export %q: %w", abi.ExportMemory, engine.ErrABI)
	}
	mem := ext.Memory()
	if m.hasInit {
		if _, err := inst.GetFunc(store, abi.ExportInitialize).Call(store); err != nil {
			return nil, m.fail(ctx, store, mem, abi.ExportInitialize, err, c)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("call %s: %w", export, err)
	}

	// The call gets its own deadline, grown with its input.
	store.SetEpochDeadline(m.ticks(ctx, m.limits.CallDeadline(len(input))))
	if !m.abiChecked.Load() {
		v, err := inst.GetFunc(store, abi.ExportABIVersion).Call(store)
		if err != nil {
			return nil, m.fail(ctx, store, mem, abi.ExportABIVersion, err, c)
		}
		if got := v.(int32); got != abi.Version {
			return nil, fmt.Errorf("plugin reports ABI version %d, want %d: %w", got, abi.Version, engine.ErrABIVersion)
		}
		m.abiChecked.Store(true)
	}
	var args []interface{}
	if export == abi.ExportRender {
		p, err := inst.GetFunc(store, abi.ExportAlloc).Call(store, int32(len(input)))
		if err != nil {
			return nil, m.fail(ctx, store, mem, abi.ExportAlloc, err, c)
		}
		ptr := uint32(p.(int32))
		if !memory(mem.UnsafeData(store)).Write(ptr, input) {
			return nil, fmt.Errorf("%s returned [%d, %d+%d) outside memory: %w", abi.ExportAlloc, ptr, ptr, len(input), engine.ErrOutput)
		}
		args = []interface{}{int32(ptr), int32(len(input))}
	}
	res, err := inst.GetFunc(store, export).Call(store, args...)
	if err != nil {
		return nil, m.fail(ctx, store, mem, export, err, c)
	}
	data := mem.UnsafeData(store)
	ptr, n, err := sandbox.Span(uint64(res.(int64)), uint64(len(data)), m.limits.OutputBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", export, err)
	}
	out := make([]byte, n)
	copy(out, data[ptr:uint64(ptr)+uint64(n)])
	return out, nil
}

// fail maps an error from instantiation or a guest function to the engine's typed errors.
func (m *Module) fail(ctx context.Context, store *wasmtime.Store, mem *wasmtime.Memory, export string, err error, c *call) error {
	if c.exit != nil {
		return sandbox.Trap(export, c.exit.Error(), c.sys.Output(), m.atCap(store, mem))
	}
	var trap *wasmtime.Trap
	if errors.As(err, &trap) {
		if code := trap.Code(); code != nil && *code == wasmtime.Interrupt {
			if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s: %w", export, ctx.Err())
			}
			return fmt.Errorf("%s after %s: %w", export, m.limits.Deadline, engine.ErrTimeout)
		}
		return sandbox.Trap(export, cause(trap.Message()), c.sys.Output(), m.atCap(store, mem))
	}
	if mem == nil {
		// Instantiation failed before any guest code ran: the imports did not link.
		return fmt.Errorf("instantiate: %w: %w", engine.ErrLink, err)
	}
	return sandbox.Trap(export, cause(err.Error()), c.sys.Output(), m.atCap(store, mem))
}

// cause returns the last line of a Wasmtime error, which names the trap ("wasm trap: wasm
// `unreachable` instruction executed"); the lines before it are the backtrace.
func cause(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	return strings.TrimSpace(msg)
}

// atCap reports whether the guest's memory is within one page of the cap.
func (m *Module) atCap(store *wasmtime.Store, mem *wasmtime.Memory) bool {
	if mem == nil {
		return false
	}
	return uint64(mem.DataSize(store))+65536 > uint64(m.limits.MemoryPages)*65536
}
