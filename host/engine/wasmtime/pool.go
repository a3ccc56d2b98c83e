//go:build wasmtime

package wasmtime

/*
#include <stddef.h>
#include <stdint.h>

// Wasmtime's C API for the pooling allocator, which wasmtime-go links (libwasmtime) but does not
// wrap. The pointer types are opaque here; they are the library's own.
typedef struct wasm_config_t wasm_config_t;
typedef struct wasmtime_pooling_allocation_config_t wasmtime_pooling_allocation_config_t;
extern wasmtime_pooling_allocation_config_t *wasmtime_pooling_allocation_config_new(void);
extern void wasmtime_pooling_allocation_config_delete(wasmtime_pooling_allocation_config_t *);
extern void wasmtime_pooling_allocation_config_total_core_instances_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_memories_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_total_tables_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_max_unused_warm_slots_set(wasmtime_pooling_allocation_config_t *, uint32_t);
extern void wasmtime_pooling_allocation_config_linear_memory_keep_resident_set(wasmtime_pooling_allocation_config_t *, size_t);
extern void wasmtime_pooling_allocation_config_table_keep_resident_set(wasmtime_pooling_allocation_config_t *, size_t);
extern void wasmtime_pooling_allocation_strategy_set(wasm_config_t *, const wasmtime_pooling_allocation_config_t *);
*/
import "C"

import (
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// Pooling switches wc to Wasmtime's pooling allocator with slots instance slots, each keeping
// keepResident bytes of linear memory resident after use, and reports whether it could. It
// reaches the C config through wasmtime.Config's single pointer field (wasmtime-go v39 has no
// accessor); when that layout changes, it leaves wc on the default allocator. New calls it with
// DefaultSlots (or Config.Slots) and KeepResident; it is exported so that benchmarks can set up
// a raw Wasmtime engine exactly as the Engine's.
func Pooling(wc *wasmtime.Config, slots uint32, keepResident int) bool {
	if unsafe.Sizeof(*wc) != unsafe.Sizeof(uintptr(0)) {
		return false
	}
	ptr := *(**C.wasm_config_t)(unsafe.Pointer(wc))
	if ptr == nil {
		return false
	}
	pc := C.wasmtime_pooling_allocation_config_new()
	defer C.wasmtime_pooling_allocation_config_delete(pc)
	C.wasmtime_pooling_allocation_config_total_core_instances_set(pc, C.uint32_t(slots))
	C.wasmtime_pooling_allocation_config_total_memories_set(pc, C.uint32_t(slots))
	C.wasmtime_pooling_allocation_config_total_tables_set(pc, C.uint32_t(slots))
	C.wasmtime_pooling_allocation_config_max_unused_warm_slots_set(pc, C.uint32_t(slots))
	C.wasmtime_pooling_allocation_config_linear_memory_keep_resident_set(pc, C.size_t(keepResident))
	C.wasmtime_pooling_allocation_config_table_keep_resident_set(pc, C.size_t(keepResident))
	C.wasmtime_pooling_allocation_strategy_set(ptr, pc)
	return true
}
