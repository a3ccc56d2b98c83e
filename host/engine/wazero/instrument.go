package wazero

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"

	"github.com/loadout-dev/loadout/host/engine/internal/meter"
)

// meterCacheKey names the instrumentation a cached module went through.
var meterCacheKey = "meter-v" + strconv.Itoa(meter.Version) + " default-interval"

// instrument returns meter.Instrument(wasm). With cacheDir set, the result is kept at
// cacheDir/meter/<sha256 of the key and the input>.wasm: instrumenting a 3 MB Go plugin takes
// about 40 ms, which a CLI would otherwise pay for every plugin on every start. Like the
// compilation cache, the directory is trusted.
func instrument(wasm []byte, cacheDir string) ([]byte, error) {
	if cacheDir == "" {
		return meter.Instrument(wasm, meter.Options{})
	}
	h := sha256.New()
	h.Write([]byte(meterCacheKey + "\x00"))
	h.Write(wasm)
	path := filepath.Join(cacheDir, "meter", hex.EncodeToString(h.Sum(nil))+".wasm")
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	}
	out, err := meter.Instrument(wasm, meter.Options{})
	if err != nil {
		return nil, err
	}
	// A failed cache write only costs the next process an instrumentation.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
		if tmp, err := os.CreateTemp(filepath.Dir(path), ".meter-*"); err == nil {
			_, werr := tmp.Write(out)
			cerr := tmp.Close()
			if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
				_ = os.Remove(tmp.Name())
			}
		}
	}
	return out, nil
}
