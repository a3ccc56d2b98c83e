//go:build wasip1

package sdk

import (
	"unsafe"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// The exports of sdk/abi, for a module built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
// A wasm instance is single-threaded and the host calls one export at a time, so the state
// below needs no lock.
var (
	// inputs keeps every buffer handed out by loadout_alloc reachable until the render call
	// that consumes it returns: the garbage collector cannot see the host's pointer.
	inputs [][]byte
	// output is the last buffer returned to the host; it stays alive until the next call.
	output []byte
)

//go:wasmexport loadout_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport loadout_alloc
func exportAlloc(size uint32) uint32 {
	b := make([]byte, max(size, 1))
	inputs = append(inputs, b)
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

//go:wasmexport loadout_manifest
func exportManifest() uint64 {
	p := Registered()
	if p == nil {
		return result(encodeError(abi.CodeInternal, "no renderer registered: call sdk.Register from init"))
	}
	return result(p.ManifestJSON())
}

//go:wasmexport loadout_render
func exportRender(ptr, size uint32) uint64 {
	in, ok := input(ptr, size)
	var out []byte
	switch p := Registered(); {
	case !ok:
		out = encodeError(abi.CodeInvalidInput, "request is not inside a buffer returned by loadout_alloc")
	case p == nil:
		out = encodeError(abi.CodeInternal, "no renderer registered: call sdk.Register from init")
	default:
		out = p.Render(in)
	}
	inputs = nil
	return result(out)
}

// input returns the [ptr, ptr+size) range of an allocated buffer.
func input(ptr, size uint32) ([]byte, bool) {
	for _, b := range inputs {
		start := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
		if uint64(ptr) >= start && uint64(ptr)+uint64(size) <= start+uint64(len(b)) {
			off := uint64(ptr) - start
			return b[off : off+uint64(size)], true
		}
	}
	return nil, false
}

// result keeps b alive as the current output and packs its address and length.
func result(b []byte) uint64 {
	output = b
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(b))
}
