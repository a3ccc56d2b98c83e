package sandbox

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Exports are the function exports of ABI v1 with their signatures. Initialize is optional.
var Exports = map[string]Signature{
	abi.ExportABIVersion: {Results: []ValueType{I32}},
	abi.ExportAlloc:      {Params: []ValueType{I32}, Results: []ValueType{I32}},
	abi.ExportManifest:   {Results: []ValueType{I64}},
	abi.ExportRender:     {Params: []ValueType{I32, I32}, Results: []ValueType{I64}},
	abi.ExportInitialize: {},
}

// CheckExport reports whether a function export the ABI names has the right type. present is
// false when the module lacks the export (an error unless it is abi.ExportInitialize).
func CheckExport(name string, present bool, params, results []ValueType) error {
	want := Exports[name]
	if !present {
		if name == abi.ExportInitialize {
			return nil
		}
		return fmt.Errorf("missing export %q: %w", name, engine.ErrABI)
	}
	if !want.Equal(params, results) {
		return fmt.Errorf("export %q has type %v -> %v, want %v -> %v: %w", name, params, results, want.Params, want.Results, engine.ErrABI)
	}
	return nil
}

// CheckImport reports whether a function import may link: only a WASI preview-1 function with
// its exact type.
func CheckImport(module, name string, params, results []ValueType) error {
	if module != Module {
		return fmt.Errorf("import %s.%s: only %s may be imported: %w", module, name, Module, engine.ErrLink)
	}
	want, ok := Signatures[name]
	if !ok {
		return fmt.Errorf("import %s.%s: no such WASI function: %w", module, name, engine.ErrLink)
	}
	if !want.Equal(params, results) {
		return fmt.Errorf("import %s.%s has type %v -> %v, want %v -> %v: %w", module, name, params, results, want.Params, want.Results, engine.ErrLink)
	}
	return nil
}

// CheckMemory reports whether a declared memory fits the page cap.
func CheckMemory(minPages uint64, maxPages uint64, hasMax bool, capPages uint32) error {
	if minPages > uint64(capPages) {
		return fmt.Errorf("memory declares %d initial pages, over the cap of %d: %w", minPages, capPages, engine.ErrMemoryLimit)
	}
	if hasMax && maxPages > uint64(capPages) {
		return fmt.Errorf("memory declares a maximum of %d pages, over the cap of %d: %w", maxPages, capPages, engine.ErrMemoryLimit)
	}
	return nil
}

// CheckCall reports whether export may be called through Module.Call.
func CheckCall(export string) error {
	if export != abi.ExportManifest && export != abi.ExportRender {
		return fmt.Errorf("call %q: only %s and %s may be called: %w", export, abi.ExportManifest, abi.ExportRender, engine.ErrABI)
	}
	return nil
}

// Span decodes a packed (ptr<<32 | len) result and checks it against the memory size and the
// output cap, in 64-bit arithmetic so that no pointer plus length can wrap.
func Span(packed uint64, memSize uint64, outputCap int) (ptr, n uint32, err error) {
	ptr, n = uint32(packed>>32), uint32(packed)
	if uint64(n) > uint64(outputCap) {
		return 0, 0, fmt.Errorf("output of %d bytes over the cap of %d: %w", n, outputCap, engine.ErrOutput)
	}
	if uint64(ptr)+uint64(n) > memSize {
		return 0, 0, fmt.Errorf("output [%d, %d+%d) outside the %d bytes of memory: %w", ptr, ptr, n, memSize, engine.ErrOutput)
	}
	return ptr, n, nil
}

// MaxPages is the largest page cap an engine applies: one page short of 4 GiB, so that every
// memory size fits in 32 bits.
const MaxPages = 65535

// Limits fills the zero fields of l from engine.DefaultLimits and lowers a page cap above
// MaxPages to MaxPages.
func Limits(l engine.Limits) engine.Limits {
	d := engine.DefaultLimits
	if l.ModuleBytes <= 0 {
		l.ModuleBytes = d.ModuleBytes
	}
	if l.MemoryPages == 0 {
		l.MemoryPages = d.MemoryPages
	}
	l.MemoryPages = min(l.MemoryPages, MaxPages)
	if l.Deadline <= 0 {
		l.Deadline = d.Deadline
	}
	if l.DeadlinePerKiB <= 0 {
		l.DeadlinePerKiB = d.DeadlinePerKiB
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.StderrBytes <= 0 {
		l.StderrBytes = d.StderrBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	return l
}

// CheckModule is the first thing an engine's Compile does: it fills l (Limits) and refuses a
// module over its size cap or one the bounded reader refuses (wasmbin.Check), before any
// runtime decodes the untrusted bytes.
func CheckModule(wasm []byte, l engine.Limits) (engine.Limits, error) {
	l = Limits(l)
	if len(wasm) > l.ModuleBytes {
		return l, fmt.Errorf("module of %d bytes over the cap of %d: %w", len(wasm), l.ModuleBytes, engine.ErrModuleSize)
	}
	return l, wasmbin.Check(wasm)
}

// Trap builds the error for a guest that trapped, panicked or exited while running export.
// memory is true when the guest had asked for memory past the cap, so errors.Is(err,
// engine.ErrMemoryLimit) holds.
func Trap(export, msg, output string, memory bool) error {
	te := &engine.TrapError{Export: export, Msg: msg, Output: output}
	if memory {
		return fmt.Errorf("%w: %w", engine.ErrMemoryLimit, te)
	}
	return te
}
