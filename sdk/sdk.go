// Package sdk is the guest side of a loadout renderer plugin written in Go.
//
// A plugin is one pure function, a RenderFunc, registered with its manifest from the plugin's
// init function; its main function is empty:
//
//	func init() { sdk.Register(manifest, render) }
//	func main() {}
//
// Built with `GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared`, the module is a reactor:
// the host runs _initialize (package init, hence Register) once per instance and then calls the
// exports that export_wasip1.go defines for every name in sdk/abi. Those exports decode the
// request strictly, call the RenderFunc, turn a returned error or a panic into an
// abi.ErrorResponse, and encode the plan. Natively the package builds too, so renderers are unit
// tested with sdk/sdktest through exactly the same Plugin.Render path.
//
// The package uses the standard library and sdk/abi only. sdk/ABI.md documents the wire
// contract for plugins written in other languages.
package sdk

import (
	"errors"
	"fmt"
	"sync"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// RenderFunc renders one vetted request into a plan. It must be deterministic (same request,
// same plan) and must not keep state between calls. Returning an *abi.Error keeps its code (one
// of abi.CodeInvalidInput, abi.CodeUnsupported, abi.CodeInternal); any other error, and a panic,
// becomes abi.CodeInternal.
type RenderFunc func(req abi.Request) (abi.Plan, error)

// Plugin is a manifest bound to its RenderFunc. Render is the whole guest-side wire path, shared
// by the wasm exports and by sdk/sdktest. A Plugin is immutable; it is safe for concurrent use
// when its RenderFunc is.
type Plugin struct {
	manifest     abi.Manifest
	manifestJSON []byte
	render       RenderFunc
}

// New checks m and binds it to r. A zero m.ABIVersion is set to abi.Version; any other value
// but abi.Version is refused, as are an empty name, version or harness, an unknown or repeated
// transport or root, and a nil r.
func New(m abi.Manifest, r RenderFunc) (*Plugin, error) {
	if r == nil {
		return nil, errors.New("sdk: nil RenderFunc")
	}
	if m.ABIVersion == 0 {
		m.ABIVersion = abi.Version
	}
	if err := checkManifest(m); err != nil {
		return nil, fmt.Errorf("sdk: manifest %q: %w", m.Name, err)
	}
	m.Transports = append([]string{}, m.Transports...)
	m.Roots = append([]string{}, m.Roots...)
	b, err := encodeManifest(m)
	if err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	return &Plugin{manifest: m, manifestJSON: b, render: r}, nil
}

func checkManifest(m abi.Manifest) error {
	switch {
	case m.ABIVersion != abi.Version:
		return fmt.Errorf("abiVersion %d, this sdk speaks %d", m.ABIVersion, abi.Version)
	case m.Name == "":
		return errors.New("empty name")
	case m.Version == "":
		return errors.New("empty version")
	case m.Harness == "":
		return errors.New("empty harness")
	}
	if err := checkSet("transport", m.Transports, abi.TransportStdio, abi.TransportHTTP); err != nil {
		return err
	}
	if len(m.Roots) == 0 {
		return errors.New("no roots")
	}
	return checkSet("root", m.Roots, abi.RootConfig, abi.RootRun, abi.RootCheckout)
}

func checkSet(what string, values []string, allowed ...string) error {
	for i, v := range values {
		known := false
		for _, a := range allowed {
			known = known || v == a
		}
		if !known {
			return fmt.Errorf("unknown %s %q", what, v)
		}
		for _, w := range values[:i] {
			if v == w {
				return fmt.Errorf("%s %q listed twice", what, v)
			}
		}
	}
	return nil
}

// Manifest returns a copy of the checked manifest.
func (p *Plugin) Manifest() abi.Manifest {
	m := p.manifest
	m.Transports = append([]string{}, m.Transports...)
	m.Roots = append([]string{}, m.Roots...)
	return m
}

// ManifestJSON returns the manifest as the ExportManifest export returns it. The caller must
// not modify the slice.
func (p *Plugin) ManifestJSON() []byte { return p.manifestJSON }

// Render runs the wire path for one call of the ExportRender export: it decodes input strictly
// into an abi.Request, checks its ABI version and harness, calls the RenderFunc and returns the
// Plan JSON, or an ErrorResponse JSON. It never panics and never returns nil. input is only read
// during the call.
func (p *Plugin) Render(input []byte) []byte {
	req, err := decodeRequest(input)
	if err != nil {
		return encodeError(abi.CodeInvalidInput, err.Error())
	}
	if req.ABIVersion != abi.Version {
		return encodeError(abi.CodeInvalidInput, fmt.Sprintf("request abiVersion %d, plugin speaks %d", req.ABIVersion, abi.Version))
	}
	if req.Harness != p.manifest.Harness {
		return encodeError(abi.CodeUnsupported, fmt.Sprintf("request is for harness %q, plugin renders %q", req.Harness, p.manifest.Harness))
	}
	plan, err := p.call(req)
	if err != nil {
		var ae *abi.Error
		if errors.As(err, &ae) && ae != nil && knownCode(ae.Code) {
			return encodeError(ae.Code, ae.Message)
		}
		return encodeError(abi.CodeInternal, err.Error())
	}
	out, err := encodePlan(plan)
	if err != nil {
		return encodeError(abi.CodeInternal, err.Error())
	}
	return out
}

// call runs the RenderFunc, turning a panic into an error.
func (p *Plugin) call(req abi.Request) (plan abi.Plan, err error) {
	defer func() {
		if v := recover(); v != nil {
			plan, err = abi.Plan{}, fmt.Errorf("render panicked: %v", v)
		}
	}()
	return p.render(req)
}

func knownCode(code string) bool {
	switch code {
	case abi.CodeInvalidInput, abi.CodeUnsupported, abi.CodeInternal:
		return true
	}
	return false
}

var (
	mu         sync.Mutex
	registered *Plugin
)

// Register makes r, described by m, the plugin's renderer. It is called once, from the plugin's
// init function; it panics when called twice or when New refuses m or r (in a wasm module the
// panic fails _initialize, so the host refuses the module before any render).
func Register(m abi.Manifest, r RenderFunc) {
	p, err := New(m, r)
	if err != nil {
		panic(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if registered != nil {
		panic(fmt.Sprintf("sdk: Register called twice (%q, then %q)", registered.manifest.Name, m.Name))
	}
	registered = p
}

// Registered returns the Plugin that Register installed, or nil.
func Registered() *Plugin {
	mu.Lock()
	defer mu.Unlock()
	return registered
}
