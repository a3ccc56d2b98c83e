// Package wazero runs renderer plugins on wazero, the pure-Go WebAssembly runtime. It is the
// default engine: it needs no cgo, so `CGO_ENABLED=0 go build ./...` builds the whole host.
//
// Every Module has a wazero runtime of its own, with the sandbox's WASI host module and a
// compilation cache that holds that module alone, so that what wazero writes to its cache while
// compiling a module is known to be that module's code (see Config.Cache). Engine and Module
// are safe for concurrent use. Closing the Engine closes every Module it compiled.
//
// Isolation: no instance serves two calls. Every Module.Call runs in an instance that was
// instantiated and initialized (_initialize) for it alone and is closed afterwards, so nothing a
// call leaves in memory or globals reaches the next one. The instance is made on the request
// path by default (a CLI renders once); with Config.Pool, a long-running server keeps that many
// instances instantiated and initialized ahead of the calls, off the request path. A pool stops
// refilling at the first failure (a hostile _initialize) and calls fall back to instantiating
// on their own path, which reports the failure.
//
// Deadlines: the runtime runs with WithCloseOnContextDone(true): compiled code checks the
// context at every function entry and loop header, so a guest is stopped when its phase
// deadline (instantiation with _initialize gets one, the call another) or the caller's context
// ends.
//
// Memory: the page cap is enforced by a per-instance memory allocator; a memory.grow past the
// cap fails (returns -1 to the guest) and is remembered, so a guest that then traps or exits
// fails with an error for which errors.Is(err, engine.ErrMemoryLimit) holds. Each Module
// recycles the memories of its finished instances (capmem.Recycler), zeroed before the next
// instance gets one and only once the call that used it has returned: allocating a Go
// plugin's megabytes per instance made every call fault in fresh pages and set off a garbage
// collection every few calls.
package wazero

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/engine/internal/capmem"
	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Interface guards.
var (
	_ engine.Engine = (*Engine)(nil)
	_ engine.Module = (*Module)(nil)
)

// Config configures an Engine. The zero value is valid: nothing compiled is kept on disk.
type Config struct {
	// Cache, when set, keeps compiled machine code on disk across processes, so a cold CLI
	// start does not recompile a plugin it compiled before. wazero's own file cache checks
	// its entries with a CRC anyone can recompute, so it never reads the Cache's directory:
	// each compile gives wazero a fresh private temporary directory, holding only the module's
	// entry once the Cache authenticated it, and what wazero writes there is stored back in
	// the Cache, authenticated (codecache).
	Cache *codecache.Cache
	// Pool is how many instances each Module keeps instantiated and initialized ahead of the
	// calls, off the request path, each used by one call and then closed. 0 instantiates on
	// the request path. A long-running server sets it; a CLI that renders once does not. Each
	// parked instance holds its memory (up to the page cap).
	Pool int
}

// Engine compiles and runs plugins on wazero. Create it with New; it is safe for concurrent use.
type Engine struct {
	rc    wazero.RuntimeConfig
	cache *codecache.Cache
	pool  int

	mu      sync.Mutex
	closed  bool
	modules map[*Module]struct{} // open modules, closed by Close
}

// New returns an Engine. The caller closes it.
func New(_ context.Context, cfg Config) (*Engine, error) {
	if cfg.Pool < 0 {
		return nil, fmt.Errorf("wazero: Config.Pool is %d, want 0 or more", cfg.Pool)
	}
	rc := wazero.NewRuntimeConfig().
		WithCloseOnContextDone(true). // deadlines (see the package doc)
		WithCoreFeatures(api.CoreFeaturesV2)
	return &Engine{rc: rc, cache: cfg.Cache, pool: cfg.Pool, modules: map[*Module]struct{}{}}, nil
}

// Name returns "wazero".
func (e *Engine) Name() string { return "wazero" }

// Close closes every module compiled by e (the cache directory stays on disk); Compile fails
// afterwards.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	open := make([]*Module, 0, len(e.modules))
	for m := range e.modules {
		open = append(open, m)
	}
	e.mu.Unlock()
	var errs []error
	for _, m := range open {
		errs = append(errs, m.Close(ctx))
	}
	return errors.Join(errs...)
}

// stateKey carries the *call of the running instance in the context its host functions see.
type stateKey struct{}

// call is the state of one Module.Call: the sandbox of its instance and its memory allocator.
type call struct {
	sys   *sandbox.Sys
	alloc *capmem.Allocator
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

// instantiateSandbox defines the WASI host module every plugin links against.
func instantiateSandbox(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(sandbox.Module)
	for _, name := range sandbox.Names() {
		sig := sandbox.Signatures[name]
		nparams, nresults := len(sig.Params), len(sig.Results)
		fn := api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			c, ok := ctx.Value(stateKey{}).(*call)
			if !ok {
				panic(fmt.Errorf("%s.%s called outside a loadout call", sandbox.Module, name))
			}
			errno, err := c.sys.Call(name, mod.Memory(), stack[:nparams])
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
		b.NewFunctionBuilder().WithGoModuleFunction(fn, valueTypes(sig.Params), valueTypes(sig.Results)).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate the sandbox: %w", err)
	}
	return nil
}

// Compile checks the module's size, compiles it in a runtime of its own (or loads it from the
// cache, keyed on digest, the verified pin; "" hashes wasm here), then checks its imports,
// exports and memory. Every check runs on the compiled module before anything is instantiated.
func (e *Engine) Compile(ctx context.Context, wasm []byte, digest string, limits engine.Limits) (_ engine.Module, err error) {
	if limits, err = sandbox.CheckModule(wasm, limits); err != nil {
		return nil, err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("compile: %w", engine.ErrClosed)
	}
	rt, cache, cm, err := e.compile(ctx, wasm, digest)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil && cm != nil { // not yet owned by a Module
			_ = cm.Close(ctx)
			_ = rt.Close(ctx)
			if cache != nil {
				_ = cache.Close(ctx)
			}
		}
	}()
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		if err := sandbox.CheckImport(mod, name, sandboxTypes(def.ParamTypes()), sandboxTypes(def.ResultTypes())); err != nil {
			return nil, err
		}
	}
	for _, def := range cm.ImportedMemories() {
		mod, name, _ := def.Import()
		return nil, fmt.Errorf("import %s.%s: a plugin may not import memory: %w", mod, name, engine.ErrLink)
	}
	exports := cm.ExportedFunctions()
	for _, name := range []string{abi.ExportABIVersion, abi.ExportAlloc, abi.ExportManifest, abi.ExportRender, abi.ExportInitialize} {
		def, ok := exports[name]
		var params, results []sandbox.ValueType
		if ok {
			params, results = sandboxTypes(def.ParamTypes()), sandboxTypes(def.ResultTypes())
		}
		if err := sandbox.CheckExport(name, ok, params, results); err != nil {
			return nil, err
		}
	}
	mem, ok := cm.ExportedMemories()[abi.ExportMemory]
	if !ok {
		return nil, fmt.Errorf("missing export %q: %w", abi.ExportMemory, engine.ErrABI)
	}
	maxPages, hasMax := mem.Max()
	if err := sandbox.CheckMemory(uint64(mem.Min()), uint64(maxPages), hasMax, limits.MemoryPages); err != nil {
		return nil, err
	}
	_, hasInit := exports[abi.ExportInitialize]
	m := &Module{
		e:        e,
		rt:       rt,
		cache:    cache,
		cm:       cm,
		limits:   limits,
		hasInit:  hasInit,
		recycler: &capmem.Recycler{Max: e.pool + 2},
		calls:    map[uint64]context.CancelCauseFunc{},
	}
	cm = nil // m owns the module, its runtime and its cache now
	if e.pool > 0 {
		var poolCtx context.Context
		poolCtx, m.stopPool = context.WithCancel(context.WithoutCancel(ctx))
		m.ready = make(chan *instance, e.pool-1) // one more waits in refill, ready to send
		m.refilled = make(chan struct{})
		go m.refill(poolCtx)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		_ = m.Close(ctx)
		return nil, fmt.Errorf("compile: %w", engine.ErrClosed)
	}
	e.modules[m] = struct{}{}
	e.mu.Unlock()
	return m, nil
}

// compile makes a runtime for one module, with the sandbox, and compiles wasm in it. With a
// Cache, the runtime's compilation cache is a staging directory (stage) and is returned, to be
// closed with the module after the runtime: it holds the compiled code.
func (e *Engine) compile(ctx context.Context, wasm []byte, digest string) (_ wazero.Runtime, _ wazero.CompilationCache, _ wazero.CompiledModule, err error) {
	rc := e.rc
	var st *stage
	if e.cache != nil {
		// The cache only saves time: without a staging directory the module is compiled.
		if st, _ = e.stage(wasm, digest); st != nil {
			defer os.RemoveAll(st.dir)
			rc = rc.WithCompilationCache(st.cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	defer func() {
		if err != nil {
			_ = rt.Close(ctx)
			if st != nil {
				_ = st.cache.Close(ctx)
			}
		}
	}()
	if err := instantiateSandbox(ctx, rt); err != nil {
		return nil, nil, nil, err
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("compile: %w: %w", engine.ErrABI, err)
	}
	if st == nil {
		return rt, nil, cm, nil
	}
	st.keep(e.cache)
	return rt, st.cache, cm, nil
}

// stage is the private directory a wazero compilation cache reads from and writes to while
// one module compiles.
type stage struct {
	dir    string                  // a fresh temporary directory, 0700
	sub    string                  // the directory wazero made in dir, named after its version and platform
	cache  wazero.CompilationCache // wazero's cache on dir
	name   string                  // the module's entry in the Cache
	placed fs.FileInfo             // the file placed in sub from the entry, if any
}

// stage makes a staging directory for wasm and places in it the module's code from the Cache,
// when its entry authenticates. The entry holds the name wazero gives the file (a hash of the
// module and the CPU's features), a newline, and the file's bytes.
func (e *Engine) stage(wasm []byte, digest string) (_ *stage, err error) {
	dir, err := os.MkdirTemp("", "loadout-wazero-*")
	if err != nil {
		return nil, fmt.Errorf("wazero compile cache: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wazero compile cache: %w", err)
	}
	des, err := os.ReadDir(dir)
	if err != nil || len(des) != 1 || !des[0].IsDir() {
		_ = cache.Close(context.Background())
		return nil, fmt.Errorf("wazero compile cache: %s does not hold one directory of wazero's (%v)", dir, err)
	}
	if digest == "" {
		sum := sha256.Sum256(wasm)
		digest = "sha256:" + hex.EncodeToString(sum[:])
	}
	st := &stage{dir: dir, sub: filepath.Join(dir, des[0].Name()), cache: cache, name: codecache.Name("wazero", des[0].Name(), digest)}
	data, err := e.cache.Get(st.name)
	if err != nil {
		return st, nil // not cached, or not authentic: compiled again
	}
	file, code, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || !isHex(file) {
		return st, nil
	}
	path := filepath.Join(st.sub, string(file))
	if os.WriteFile(path, code, 0o600) == nil {
		st.placed, _ = os.Lstat(path)
	}
	return st, nil
}

// keep stores in c, under the module's entry, the file wazero wrote while compiling: the module
// was not in the cache, or wazero found the entry's code stale and compiled it again.
func (st *stage) keep(c *codecache.Cache) {
	des, err := os.ReadDir(st.sub)
	if err != nil {
		return
	}
	var written []string
	for _, de := range des {
		if !de.Type().IsRegular() || !isHex([]byte(de.Name())) {
			continue
		}
		if st.placed != nil && de.Name() == st.placed.Name() {
			if fi, err := os.Lstat(filepath.Join(st.sub, de.Name())); err == nil && os.SameFile(fi, st.placed) && fi.ModTime().Equal(st.placed.ModTime()) {
				continue // read, not rewritten
			}
		}
		written = append(written, de.Name())
	}
	if len(written) != 1 {
		return
	}
	code, err := os.ReadFile(filepath.Join(st.sub, written[0]))
	if err != nil {
		return
	}
	_ = c.Put(st.name, append([]byte(written[0]+"\n"), code...))
}

// isHex reports whether b is a sha256 in lower-case hex, the name of a wazero cache file.
func isHex(b []byte) bool {
	if len(b) != 2*sha256.Size {
		return false
	}
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Module is a compiled plugin; every Call runs in a fresh instance. It is safe for concurrent use.
type Module struct {
	e       *Engine
	rt      wazero.Runtime          // the module's own runtime
	cache   wazero.CompilationCache // the runtime's staged cache, nil without a Cache
	cm      wazero.CompiledModule
	limits  engine.Limits
	hasInit bool
	// recycler keeps the memories of finished instances for the next ones (capmem): as many as
	// the pool holds, and two more for the calls in flight.
	recycler *capmem.Recycler
	// abiChecked is set once an instance reported abi.Version: every instance starts from the
	// same state in the same sandbox, so every other one would report the same.
	abiChecked atomic.Bool

	mu     sync.Mutex
	closed bool
	next   uint64
	calls  map[uint64]context.CancelCauseFunc // calls in flight, cancelled by Close

	// The pool of pre-initialized single-use instances (nil channels when Config.Pool is 0).
	ready    chan *instance
	stopPool context.CancelFunc
	refilled chan struct{} // closed when the refill goroutine has returned
}

// Close stops the calls in flight (they fail with engine.ErrClosed) and releases the module.
func (m *Module) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	for _, cancel := range m.calls {
		cancel(engine.ErrClosed)
	}
	m.mu.Unlock()
	m.e.mu.Lock()
	delete(m.e.modules, m)
	m.e.mu.Unlock()
	if m.ready != nil {
		m.stopPool()
		<-m.refilled
		for {
			select {
			case inst := <-m.ready:
				_ = inst.mod.Close(ctx)
				continue
			default:
			}
			break
		}
	}
	return errors.Join(m.cm.Close(ctx), m.rt.Close(ctx), m.closeCache(ctx))
}

func (m *Module) closeCache(ctx context.Context) error {
	if m.cache == nil {
		return nil
	}
	return m.cache.Close(ctx)
}

// track registers a call in flight; the returned function unregisters it.
func (m *Module) track(cancel context.CancelCauseFunc) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, engine.ErrClosed
	}
	id := m.next
	m.next++
	m.calls[id] = cancel
	return func() {
		m.mu.Lock()
		delete(m.calls, id)
		m.mu.Unlock()
	}, nil
}

// instance is one instantiated, initialized, not yet used instance with its call state.
type instance struct {
	mod api.Module
	c   *call
}

// prepare instantiates the module and runs _initialize under one deadline.
func (m *Module) prepare(ctx context.Context) (*instance, error) {
	c := &call{sys: sandbox.New(m.limits.StderrBytes), alloc: &capmem.Allocator{Limit: uint64(m.limits.MemoryPages) * 65536, Recycler: m.recycler}}
	ctx = experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, c), c.alloc)
	phase, done := context.WithTimeout(ctx, m.limits.Deadline)
	defer done()
	mod, err := m.rt.InstantiateModule(phase, m.cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		if cerr := m.stopped(ctx, phase, abi.ExportInitialize); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("instantiate: %w: %w", engine.ErrLink, err)
	}
	if m.hasInit {
		if _, err := mod.ExportedFunction(abi.ExportInitialize).Call(phase); err != nil {
			_ = mod.Close(context.WithoutCancel(ctx))
			return nil, m.fail(ctx, phase, abi.ExportInitialize, err, c)
		}
	}
	return &instance{mod: mod, c: c}, nil
}

// refill keeps the pool of ready instances full until ctx ends. It stops at the first failure
// (a hostile _initialize, a module closing): calls then instantiate on their own path, and
// report the failure to their caller.
func (m *Module) refill(ctx context.Context) {
	defer close(m.refilled)
	for {
		inst, err := m.prepare(ctx)
		if err != nil {
			return
		}
		select {
		case m.ready <- inst:
		case <-ctx.Done():
			_ = inst.mod.Close(context.WithoutCancel(ctx))
			return
		}
	}
}

// Call runs one export in an instance no other call has used: one taken from the pool of
// pre-initialized instances when the engine keeps one and it is not empty, otherwise one
// instantiated and initialized now. It checks the ABI version (until one instance passed),
// hands input to the guest (for abi.ExportRender) and returns a copy of the bytes the export
// returned.
func (m *Module) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if err := sandbox.CheckCall(export); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	untrack, err := m.track(cancel)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", export, err)
	}
	defer untrack()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("call %s: %w", export, err)
	}

	var inst *instance
	select {
	case inst = <-m.ready: // a nil channel (no pool) is never ready
	default:
		if inst, err = m.prepare(ctx); err != nil {
			return nil, err
		}
	}
	mod, c := inst.mod, inst.c
	defer func() {
		// The guest has returned for good: its memory can serve another instance.
		_ = mod.Close(context.WithoutCancel(ctx))
		c.alloc.Release()
	}()
	ctx = context.WithValue(ctx, stateKey{}, c)

	// The call gets its own deadline, grown with its input.
	phase, done := context.WithTimeout(ctx, m.limits.CallDeadline(len(input)))
	defer done()
	if !m.abiChecked.Load() {
		res, err := mod.ExportedFunction(abi.ExportABIVersion).Call(phase)
		if err != nil {
			return nil, m.fail(ctx, phase, abi.ExportABIVersion, err, c)
		}
		if v := uint32(res[0]); v != abi.Version {
			return nil, fmt.Errorf("plugin reports ABI version %d, want %d: %w", v, abi.Version, engine.ErrABIVersion)
		}
		m.abiChecked.Store(true)
	}
	var args []uint64
	if export == abi.ExportRender {
		res, err := mod.ExportedFunction(abi.ExportAlloc).Call(phase, uint64(len(input)))
		if err != nil {
			return nil, m.fail(ctx, phase, abi.ExportAlloc, err, c)
		}
		ptr := uint32(res[0])
		if !mod.Memory().Write(ptr, input) {
			return nil, fmt.Errorf("%s returned [%d, %d+%d) outside memory: %w", abi.ExportAlloc, ptr, ptr, len(input), engine.ErrOutput)
		}
		args = []uint64{uint64(ptr), uint64(len(input))}
	}
	res, err := mod.ExportedFunction(export).Call(phase, args...)
	if err != nil {
		return nil, m.fail(ctx, phase, export, err, c)
	}
	ptr, n, err := sandbox.Span(res[0], uint64(mod.Memory().Size()), m.limits.OutputBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", export, err)
	}
	view, _ := mod.Memory().Read(ptr, n)
	out := make([]byte, n)
	copy(out, view)
	return out, nil
}

// stopped returns the error for a call that ended because a context ended (the module closed,
// the caller gave up, or the phase deadline passed), or nil when no context ended.
func (m *Module) stopped(ctx, phase context.Context, export string) error {
	switch {
	case errors.Is(context.Cause(ctx), engine.ErrClosed):
		return fmt.Errorf("%s: %w", export, engine.ErrClosed)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: %w: %w", export, engine.ErrTimeout, ctx.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", export, ctx.Err())
	case phase.Err() != nil:
		return fmt.Errorf("%s after %s: %w", export, m.limits.Deadline, engine.ErrTimeout)
	}
	return nil
}

// fail maps an error from a guest function to the engine's typed errors.
func (m *Module) fail(ctx, phase context.Context, export string, err error, c *call) error {
	if cerr := m.stopped(ctx, phase, export); cerr != nil {
		return cerr
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return fmt.Errorf("%s after %s: %w", export, m.limits.Deadline, engine.ErrTimeout)
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%s: %w", export, context.Canceled)
		}
		return sandbox.Trap(export, fmt.Sprintf("proc_exit(%d)", exit.ExitCode()), c.sys.Output(), c.alloc.Hit)
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return sandbox.Trap(export, msg, c.sys.Output(), c.alloc.Hit)
}
