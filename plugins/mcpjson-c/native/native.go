//go:build cgo

// Package native is the mcpjson renderer, whose C source is this directory (../build.sh
// compiles it to WebAssembly), compiled natively with cgo for benchmarks
// that compare the same C code with its WebAssembly build on each engine. It is not a plugin and
// not used by the host.
package native

/*
#cgo CFLAGS: -std=c11 -O2
#include <stddef.h>
const char *mcpjson_render(const char *in, size_t len, size_t *n);
*/
import "C"

import (
	"sync"
	"unsafe"
)

// mu serializes renders: the C renderer keeps its output and arena in globals.
var mu sync.Mutex

// Render renders req (an ABI v1 request) and returns a copy of the plan or of the ABI error
// document, as the WebAssembly build returns them.
func Render(req []byte) []byte {
	mu.Lock()
	defer mu.Unlock()
	var n C.size_t
	var in *C.char
	if len(req) > 0 {
		in = (*C.char)(unsafe.Pointer(&req[0]))
	}
	out := C.mcpjson_render(in, C.size_t(len(req)), &n)
	return C.GoBytes(unsafe.Pointer(out), C.int(n))
}
