// Package engine is the contract between the host and a WebAssembly runtime that runs renderer
// plugins. Two implementations exist: host/engine/wazero (default, pure Go) and
// host/engine/wasmtime (build tag "wasmtime", cgo). Both pass host/engine/enginetest.
//
// Engine exists because there are two real runtimes; nothing else implements it.
package engine

import (
	"context"
	"errors"
	"time"
)

// Limits bound what one plugin may consume. They are set in one place (DefaultLimits) and
// applied by every engine at compile, instantiation and call time.
type Limits struct {
	ModuleBytes int           // largest module accepted before compiling
	MemoryPages uint32        // 64 KiB pages, enforced at compile and at run time
	Deadline    time.Duration // for instantiation and for each call
	// DeadlinePerKiB is added to a call's Deadline for each KiB of its input, so the time a
	// render may take grows with the request it renders (CallDeadline).
	DeadlinePerKiB time.Duration
	OutputBytes    int // largest output a call may return
	StderrBytes    int // guest stdout+stderr kept (the rest is dropped)
	MaxFiles       int // files one plan may hold (checked by the host on the plan)
}

// DefaultLimits are the limits used when a caller sets none; an engine fills each zero field of
// the Limits it is given from here.
var DefaultLimits = Limits{
	ModuleBytes: 32 << 20,
	MemoryPages: 1024, // 64 MiB
	Deadline:    2 * time.Second,
	// 20 ms a KiB: a 1,000-server request (about 250 KiB) may take 7 s; a plugin that loops
	// on a small request is still stopped after about 2 s.
	DeadlinePerKiB: 20 * time.Millisecond,
	OutputBytes:    8 << 20,
	StderrBytes:    16 << 10,
	MaxFiles:       2048,
}

// CallDeadline is the deadline of a call with inputBytes of input: Deadline, plus
// DeadlinePerKiB for each whole KiB.
func (l Limits) CallDeadline(inputBytes int) time.Duration {
	return l.Deadline + time.Duration(inputBytes/1024)*l.DeadlinePerKiB
}

// Engine compiles plugin modules. An Engine is safe for concurrent use.
type Engine interface {
	// Name is "wazero" or "wasmtime".
	Name() string
	// Compile checks the module's size and exports against the ABI and compiles it. The caller
	// has already checked the module's sha256 pin; digest is that pin ("sha256:<hex>", as
	// registry.Verify accepted it), which keys the engine's compile cache so the module is not
	// hashed again. With digest "" the engine hashes the bytes itself.
	Compile(ctx context.Context, wasm []byte, digest string, limits Limits) (Module, error)
	// Close releases the engine and every module it compiled.
	Close(ctx context.Context) error
}

// Module is a compiled plugin. It is safe for concurrent use: every Call runs in an instance
// that no other call shares and that carries no state from an earlier call.
type Module interface {
	// Call runs one ABI export (abi.ExportManifest or abi.ExportRender) with input (nil for the
	// manifest) and returns a copy of the bytes the guest returned.
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	// Close releases the module; calls in flight fail.
	Close(ctx context.Context) error
}

// Errors every engine maps its failures to. Callers branch with errors.Is / errors.As.
var (
	ErrTimeout     = errors.New("plugin deadline exceeded")
	ErrMemoryLimit = errors.New("plugin memory limit exceeded")
	ErrABIVersion  = errors.New("plugin ABI version mismatch")
	ErrABI         = errors.New("plugin does not follow the ABI") // missing export, wrong signature
	ErrModuleSize  = errors.New("plugin module too large")
	ErrOutput      = errors.New("plugin output out of bounds") // bad pointer/length, too large
	ErrLink        = errors.New("plugin imports are not allowed")
	ErrClosed      = errors.New("plugin module closed") // Call on a closed Module or Engine
)

// TrapError is a guest trap, panic, proc_exit or stack exhaustion.
type TrapError struct {
	Export string // the export that was running
	Msg    string
	Output string // bounded guest stdout/stderr, not yet redacted
}

func (e *TrapError) Error() string { return "plugin trapped in " + e.Export + ": " + e.Msg }
