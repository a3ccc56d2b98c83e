package meter

import (
	"fmt"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/wasmbin"
)

// errUnsupported is wrapped by every error about a valid construct of a WebAssembly feature
// the engines do not enable (threads, exceptions, GC, typed function references, multiple
// memories, 64-bit memories, relaxed SIMD).
var errUnsupported = fmt.Errorf("unsupported feature: %w", engine.ErrABI)

// reader is wasmbin's bounds-checked cursor, with the meter's own helpers (lebLen). Every
// error about bytes that are not a module Instrument can read wraps wasmbin.ErrMalformed, which
// matches engine.ErrABI.
type reader struct{ wasmbin.Reader }

// Encoding.
