package preinit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loadout-dev/loadout/host/engine"
)

// Prepare is what an engine's Compile calls on untrusted bytes before its runtime decodes them:
// Check always; then, when snapshot is true, Snapshot (on wazero's interpreter, which is the
// fastest way to run one _initialize). A module Snapshot cannot carry over (ErrUnsupported) is
// returned unchanged. With cacheDir set, a snapshot is kept at cacheDir/preinit/<sha256 of the
// input and limits>.wasm, so the next process reads it instead of running _initialize again;
// cacheDir must be private to the user (its contents are trusted, like a compile cache).
func Prepare(ctx context.Context, wasm []byte, limits engine.Limits, snapshot bool, cacheDir string) ([]byte, error) {
	if err := Check(wasm); err != nil {
		return nil, err
	}
	if !snapshot {
		return wasm, nil
	}
	var cachePath string
	if cacheDir != "" {
		h := sha256.New()
		fmt.Fprintf(h, "preinit-v2 %d %d %d %d\n", limits.ModuleBytes, limits.MemoryPages, limits.Deadline, limits.StderrBytes)
		h.Write(wasm)
		cachePath = filepath.Join(cacheDir, "preinit", hex.EncodeToString(h.Sum(nil))+".wasm")
		if b, err := os.ReadFile(cachePath); err == nil && Check(b) == nil {
			return b, nil
		}
	}
	snap, err := Snapshot(ctx, wasm, Options{Limits: limits, Interpreter: true})
	if errors.Is(err, ErrUnsupported) {
		return wasm, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pre-initialize: %w", err)
	}
	if cachePath != "" {
		// A failed cache write only costs the next process a snapshot.
		if err := os.MkdirAll(filepath.Dir(cachePath), 0o700); err == nil {
			tmp := cachePath + ".tmp" + hex.EncodeToString(snap[len(snap)-4:])
			if os.WriteFile(tmp, snap, 0o600) == nil {
				_ = os.Rename(tmp, cachePath)
			}
		}
	}
	return snap, nil
}
