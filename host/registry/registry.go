// Package registry turns pinned plugin artifacts into loaded plugins. An Artifact is the bytes
// of a WebAssembly module and the sha256 pin it must match; Load checks the pin before anything
// is compiled, compiles the module on the engine it is given, calls the plugin's manifest export
// once and decodes the manifest strictly. There is no discovery: callers list their artifacts.
//
// The package depends on the engine contract (host/engine) only, never on an engine
// implementation; the caller injects the engine. Functions are safe for concurrent use; a
// Plugin is safe for concurrent use and owns its compiled module until Close.
package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Errors callers branch on with errors.Is.
var (
	// ErrPinMismatch: the artifact's bytes do not hash to its pin, or the pin is malformed.
	ErrPinMismatch = errors.New("plugin sha256 pin mismatch")
	// ErrManifest: the plugin's manifest is not valid JSON of the ABI's Manifest shape or breaks
	// one of its rules.
	ErrManifest = errors.New("invalid plugin manifest")
)

// PinPrefix starts every pin.
const PinPrefix = "sha256:"

// Artifact is a plugin module and what it is trusted to be.
type Artifact struct {
	// Name identifies the artifact in errors and logs, e.g. "claude.wasm".
	Name string
	// Wasm is the module's bytes.
	Wasm []byte
	// SHA256 is the pin, "sha256:" and 64 lowercase hex digits.
	SHA256 string
	// Harness, when set, is the harness the manifest must declare.
	Harness string
	// Manifest, when set, is the manifest these very bytes reported when they were pinned
	// (host/builtin records it beside the digest at build time). Load validates it as it would
	// the plugin's answer and does not call the manifest export: a command that loads a plugin
	// only to render with it saves an instantiation.
	Manifest *abi.Manifest
	// Limits bound the plugin; zero fields take engine.DefaultLimits.
	Limits engine.Limits
}

// Digest returns the pin of wasm: "sha256:" and the lowercase hex digest.
func Digest(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return PinPrefix + hex.EncodeToString(sum[:])
}

// Verify checks that a's bytes match its pin. It is the first thing Load does, before a byte of
// the module reaches a compiler.
func Verify(a Artifact) error {
	hexDigest, ok := strings.CutPrefix(a.SHA256, PinPrefix)
	if !ok || len(hexDigest) != sha256.Size*2 || strings.ToLower(hexDigest) != hexDigest {
		return fmt.Errorf("artifact %s: pin %q is not %s followed by 64 lowercase hex digits: %w", a.Name, a.SHA256, PinPrefix, ErrPinMismatch)
	}
	if _, err := hex.DecodeString(hexDigest); err != nil {
		return fmt.Errorf("artifact %s: pin %q is not hex: %w", a.Name, a.SHA256, ErrPinMismatch)
	}
	if got := Digest(a.Wasm); got != a.SHA256 {
		return fmt.Errorf("artifact %s: bytes hash to %s, pinned %s: %w", a.Name, got, a.SHA256, ErrPinMismatch)
	}
	return nil
}

// VerifyProfile checks that the bytes of a harness profile (docs/PROFILES.md) match their pin,
// as Verify does for a module: a profile is what the host reads a plugin's plans through, so it
// is pinned beside the module and checked before it is parsed. name identifies it in errors.
func VerifyProfile(name string, data []byte, pin string) error {
	return Verify(Artifact{Name: name, Wasm: data, SHA256: pin})
}

// Plugin is a verified, compiled plugin with its validated manifest. It is safe for concurrent
// use: every Render runs in its own fresh instance.
type Plugin struct {
	name     string
	digest   string
	manifest abi.Manifest
	mod      engine.Module
}

// Load verifies a's pin, compiles it on eng, and reads (or takes a.Manifest) and validates its
// manifest. The caller closes the returned Plugin; eng must outlive it.
func Load(ctx context.Context, eng engine.Engine, a Artifact) (_ *Plugin, err error) {
	if err := Verify(a); err != nil {
		return nil, err
	}
	mod, err := eng.Compile(ctx, a.Wasm, a.SHA256, a.Limits)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", a.Name, err)
	}
	defer func() {
		if err != nil {
			_ = mod.Close(ctx)
		}
	}()
	var m abi.Manifest
	if a.Manifest != nil {
		m = *a.Manifest
		m.Transports, m.Roots = slices.Clone(m.Transports), slices.Clone(m.Roots)
		if err := validate(m); err != nil {
			return nil, fmt.Errorf("artifact %s: pinned %w", a.Name, err)
		}
	} else {
		raw, err := mod.Call(ctx, abi.ExportManifest, nil)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: manifest: %w", a.Name, err)
		}
		if m, err = DecodeManifest(raw); err != nil {
			return nil, fmt.Errorf("artifact %s: %w", a.Name, err)
		}
	}
	if a.Harness != "" && m.Harness != a.Harness {
		return nil, fmt.Errorf("artifact %s: manifest declares harness %q, want %q: %w", a.Name, m.Harness, a.Harness, ErrManifest)
	}
	return &Plugin{name: m.Name, digest: a.SHA256, manifest: m, mod: mod}, nil
}

// Manifest returns a copy of the plugin's manifest.
func (p *Plugin) Manifest() abi.Manifest {
	m := p.manifest
	m.Transports = slices.Clone(m.Transports)
	m.Roots = slices.Clone(m.Roots)
	return m
}

// Digest returns the pin the plugin was loaded with.
func (p *Plugin) Digest() string { return p.digest }

// Render runs the plugin's render export on a request (abi.Request JSON) and returns the bytes
// it returned (abi.Plan or abi.ErrorResponse JSON), unchecked: checking them is the caller's job.
func (p *Plugin) Render(ctx context.Context, request []byte) ([]byte, error) {
	out, err := p.mod.Call(ctx, abi.ExportRender, request)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", p.name, err)
	}
	return out, nil
}

// Close releases the compiled module.
func (p *Plugin) Close(ctx context.Context) error { return p.mod.Close(ctx) }

var (
	namePattern    = regexp.MustCompile(`^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$`)
	harnessPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
)

const maxFieldLen = 128

// DecodeManifest decodes a manifest strictly (valid UTF-8, one JSON object, no unknown fields,
// no duplicate keys, nothing after it) and validates it: name "<namespace>.<name>" in
// lowercase, a version, abiVersion equal to abi.Version, a lowercase harness id, transports a
// subset of stdio/http and roots a subset of config/run/checkout, each without repeats.
func DecodeManifest(b []byte) (abi.Manifest, error) {
	var m abi.Manifest
	if !utf8.Valid(b) {
		return m, fmt.Errorf("manifest is not valid UTF-8: %w", ErrManifest)
	}
	if err := checkDuplicateKeys(b); err != nil {
		return m, fmt.Errorf("manifest: %w: %w", ErrManifest, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("manifest: %w: %w", ErrManifest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return m, fmt.Errorf("manifest: data after the object at offset %d: %w", dec.InputOffset(), ErrManifest)
	}
	if err := validate(m); err != nil {
		return abi.Manifest{}, err
	}
	return m, nil
}

func validate(m abi.Manifest) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("manifest: "+format+": %w", append(args, ErrManifest)...))
	}
	if len(m.Name) > maxFieldLen || !namePattern.MatchString(m.Name) {
		bad("name %q is not <namespace>.<name> in lowercase", m.Name)
	}
	if m.Version == "" || len(m.Version) > maxFieldLen || strings.ContainsFunc(m.Version, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		bad("version %q is empty, too long or holds spaces or control characters", m.Version)
	}
	if m.ABIVersion != abi.Version {
		errs = append(errs, fmt.Errorf("manifest: abiVersion %d, want %d: %w", m.ABIVersion, abi.Version, engine.ErrABIVersion))
	}
	if len(m.Harness) > maxFieldLen || !harnessPattern.MatchString(m.Harness) {
		bad("harness %q is not a lowercase id", m.Harness)
	}
	subset := func(field string, got, allowed []string) {
		seen := map[string]bool{}
		for _, v := range got {
			if !slices.Contains(allowed, v) {
				bad("%s: %q is not one of %v", field, v, allowed)
			}
			if seen[v] {
				bad("%s: %q is listed twice", field, v)
			}
			seen[v] = true
		}
	}
	subset("transports", m.Transports, []string{abi.TransportStdio, abi.TransportHTTP})
	subset("roots", m.Roots, []string{abi.RootConfig, abi.RootRun, abi.RootCheckout})
	return errors.Join(errs...)
}

// checkDuplicateKeys walks the JSON token stream and fails on an object that repeats a key.
// Malformed JSON is left for the decoder to report.
func checkDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object    bool
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return fmt.Errorf("key %q repeated at offset %d", key, dec.InputOffset())
				}
				top.keys[key] = true
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the enclosing object expects a key next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expectKey = true
		}
	}
}
