//go:build wasmtime

package wasmtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/codecache"
	"github.com/loadout-dev/loadout/host/engine/enginetest"
	"github.com/loadout-dev/loadout/host/engine/wasmtime"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestEngine(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  wasmtime.Config
	}{
		{"no cache", wasmtime.Config{}},
		{"module cache on disk", wasmtime.Config{Cache: enginetest.TempCache(t)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enginetest.Run(t, func(t *testing.T) engine.Engine {
				e, err := wasmtime.New(context.Background(), tc.cfg)
				require.NoError(t, err, "wasmtime.New(%+v)", tc.cfg)
				return e
			})
		})
	}
}

// TestCompileCacheAuthenticated: compiled code from the cache runs only once authenticated
// (enginetest.Cache). An entry is a serialized module, which names its own code: the planted
// entry is impostor.wat's, whole.
func TestCompileCacheAuthenticated(t *testing.T) {
	enginetest.Cache(t, func(t *testing.T, c *codecache.Cache) engine.Engine {
		e, err := wasmtime.New(context.Background(), wasmtime.Config{Cache: c})
		require.NoError(t, err, "wasmtime.New(Cache)")
		return e
	}, func(_, b []byte) []byte { return b })
}

// deepWAT is a plugin whose render reports, as two digits, the bytes it finds at offset 32
// (in its initial page) and at offset 20 MiB (after growing memory to 32 MiB), then sets both,
// so a later instance sees a 1 wherever its memory was not fresh.
const deepWAT = `(module
  (memory (export "memory") 1 1024)
  (func (export "_initialize"))
  (func (export "loadout_abi_version") (result i32) (i32.const 1))
  (func (export "loadout_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "loadout_manifest") (result i64) (i64.const 0))
  (func (export "loadout_render") (param i32 i32) (result i64)
    (if (i32.lt_u (memory.size) (i32.const 512))
      (then (drop (memory.grow (i32.sub (i32.const 512) (memory.size))))))
    (i32.store8 (i32.const 0) (i32.add (i32.const 48) (i32.load8_u (i32.const 32))))
    (i32.store8 (i32.const 1) (i32.add (i32.const 48) (i32.load8_u (i32.const 20971520))))
    (i32.store8 (i32.const 32) (i32.const 1))
    (i32.store8 (i32.const 20971520) (i32.const 1))
    (i64.const 2)))`

func TestSlots(t *testing.T) {
	ctx := context.Background()
	deep, err := wt.Wat2Wasm(deepWAT)
	require.NoError(t, err, "Wat2Wasm(deepWAT)")
	for _, tc := range []struct {
		name       string
		slots      int
		goroutines int
		wasm       []byte
		want       string
	}{
		{"fresh memory in the initial and the grown pages", 1, 1, deep, "00"},
		{"fresh memory with calls sharing two slots", 2, 6, deep, "00"},
		{"more callers than slots wait for one", 2, 8, enginetest.WAT(t, "ok"), "00x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := wasmtime.New(ctx, wasmtime.Config{Slots: tc.slots})
			require.NoError(t, err, "wasmtime.New(Slots: %d)", tc.slots)
			defer e.Close(ctx)
			m, err := e.Compile(ctx, tc.wasm, "", engine.Limits{MemoryPages: 1024})
			require.NoError(t, err, "Compile with a 64 MiB memory cap")
			defer m.Close(ctx)
			var wg sync.WaitGroup
			errs := make(chan error, tc.goroutines*10)
			for g := 0; g < tc.goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						out, err := m.Call(ctx, abi.ExportRender, []byte("x"))
						if err != nil {
							errs <- fmt.Errorf("Call(render) #%d with %d slots: %w", i, tc.slots, err)
						} else if string(out) != tc.want {
							errs <- fmt.Errorf("Call(render) #%d with %d slots = %q, want %q: an instance saw an earlier one", i, tc.slots, out, tc.want)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestWaitForSlotHonoursContext(t *testing.T) {
	ctx := context.Background()
	e, err := wasmtime.New(ctx, wasmtime.Config{Slots: 1})
	require.NoError(t, err, "wasmtime.New(Slots: 1)")
	defer e.Close(ctx)
	busy, err := e.Compile(ctx, enginetest.WAT(t, "loop_render"), "", engine.Limits{Deadline: 2 * time.Second})
	require.NoError(t, err, "Compile(loop_render.wat)")
	defer busy.Close(ctx)
	ok, err := e.Compile(ctx, enginetest.WAT(t, "ok"), "", enginetest.Limits)
	require.NoError(t, err, "Compile(ok.wat)")
	defer ok.Close(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := busy.Call(ctx, abi.ExportRender, nil)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = ok.Call(short, abi.ExportRender, []byte("x"))
	require.ErrorIs(t, err, context.DeadlineExceeded, "Call(render) on ok.wat while loop_render.wat holds the only slot, with a 100ms context")
	require.ErrorIs(t, <-done, engine.ErrTimeout, "Call(render) on loop_render.wat")
	out, err := ok.Call(ctx, abi.ExportRender, []byte("x"))
	require.NoError(t, err, "Call(render) on ok.wat once the slot is free")
	require.Equal(t, "00x", string(out), "Call(render, x) on ok.wat once the slot is free")
}
