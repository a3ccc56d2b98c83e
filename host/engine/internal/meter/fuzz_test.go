package meter_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/engine/internal/meter"
	"github.com/loadout-dev/loadout/host/engine/preinit"
)

// FuzzInstrument feeds arbitrary bytes to Instrument: it must not panic, must fail with a
// typed error, must stay within MaxGrowth, and when wazero accepts the input and Instrument
// succeeds, wazero must accept the output too. Inputs go to wazero only once preinit's bounded
// reader accepts them, as in the engine (wazero allocates hostile vector lengths).
func FuzzInstrument(f *testing.F) {
	for _, name := range append(watNames, "tailcall") {
		f.Add(wat(f, name), int32(0))
	}
	f.Add(fn(0, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b), int32(3))
	f.Add(fn(0, 0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 11, 0, 0x0b), int32(8))
	f.Add(fn(0, 0x10, 0x00, 0x0b), int32(1))
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(api.CoreFeaturesV2))
	f.Cleanup(func() { _ = r.Close(ctx) })
	f.Add(bytes.Clone(nameSubsections), int32(0))
	f.Fuzz(func(t *testing.T, wasm []byte, interval int32) {
		orig := bytes.Clone(wasm)
		out, err := meter.Instrument(wasm, meter.Options{Interval: interval})
		if !bytes.Equal(orig, wasm) {
			t.Fatalf("Instrument(%x) changed its input", orig)
		}
		if err != nil {
			if interval >= 0 && interval <= meter.MaxInterval && !errors.Is(err, engine.ErrABI) && !errors.Is(err, engine.ErrLink) {
				t.Fatalf("Instrument(%x): %v, want an error wrapping engine.ErrABI or engine.ErrLink", wasm, err)
			}
			return
		}
		if len(out) > meter.MaxGrowth*len(wasm)+256 {
			t.Fatalf("Instrument(%d bytes) = %d bytes, over MaxGrowth", len(wasm), len(out))
		}
		if preinit.Check(wasm) != nil {
			return
		}
		cm, err := r.CompileModule(ctx, wasm)
		if err != nil {
			return
		}
		_ = cm.Close(ctx)
		cm, err = r.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("wazero accepts %x but not its instrumented form %x: %v", wasm, out, err)
		}
		_ = cm.Close(ctx)
	})
}
