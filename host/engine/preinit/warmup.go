package preinit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/loadout-dev/loadout/host/engine/internal/sandbox"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// DefaultWarmups is Options.Warmups when zero: how many synthetic renders run between
// _initialize and the snapshot.
const DefaultWarmups = 2

// errWarmup marks a warm-up that did not complete; Snapshot then snapshots right after
// _initialize instead.
var errWarmup = errors.New("warm-up render failed")

// warmUp renders a synthetic request n times in mod, discarding the plans. A Go plugin's first
// render in a fresh runtime grows the heap (new arena, span metadata, memory.grow with its zero
// fill): about 1 ms of the 1.1 ms a render took on a fresh pre-initialized instance, against
// 0.14 ms once warm. Rendering before the snapshot moves that work into the snapshot, so every
// instance starts with the heap a render needs. The request is built here from the plugin's own
// manifest and holds no caller data: only placeholders and fixed example values.
func warmUp(ctx context.Context, mod api.Module, outputBytes, n int) error {
	manifest, alloc, render := mod.ExportedFunction(abi.ExportManifest), mod.ExportedFunction(abi.ExportAlloc), mod.ExportedFunction(abi.ExportRender)
	if manifest == nil || alloc == nil || render == nil {
		return fmt.Errorf("%w: an ABI export is missing", errWarmup)
	}
	res, err := manifest.Call(ctx)
	if err != nil || len(res) != 1 {
		return fmt.Errorf("%w: %s: %v", errWarmup, abi.ExportManifest, err)
	}
	out, err := output(mod, res[0], outputBytes)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errWarmup, abi.ExportManifest, err)
	}
	var m abi.Manifest
	if err := json.Unmarshal(out, &m); err != nil {
		return fmt.Errorf("%w: manifest: %w", errWarmup, err)
	}
	req := warmupRequest(m)
	for range n {
		p, err := alloc.Call(ctx, uint64(len(req)))
		if err != nil || len(p) != 1 {
			return fmt.Errorf("%w: %s: %v", errWarmup, abi.ExportAlloc, err)
		}
		if !mod.Memory().Write(uint32(p[0]), req) {
			return fmt.Errorf("%w: %s returned a buffer outside memory", errWarmup, abi.ExportAlloc)
		}
		res, err := render.Call(ctx, uint64(uint32(p[0])), uint64(len(req)))
		if err != nil || len(res) != 1 {
			return fmt.Errorf("%w: %s: %v", errWarmup, abi.ExportRender, err)
		}
		if _, err := output(mod, res[0], outputBytes); err != nil {
			return fmt.Errorf("%w: %s: %w", errWarmup, abi.ExportRender, err)
		}
	}
	return nil
}

// output reads the bytes an export's packed result names.
func output(mod api.Module, packed uint64, capBytes int) ([]byte, error) {
	ptr, n, err := sandbox.Span(packed, uint64(mod.Memory().Size()), capBytes)
	if err != nil {
		return nil, err
	}
	b, ok := mod.Memory().Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("output [%d, %d+%d) outside memory", ptr, ptr, n)
	}
	return b, nil
}

// warmupRequest is a request shaped like a real run's for the harness and transports m names:
// two servers per transport (environment, headers, secret placeholders, restricted tools) and a
// skill with a resource given by reference.
func warmupRequest(m abi.Manifest) []byte {
	req := abi.Request{
		ABIVersion: abi.Version,
		Harness:    m.Harness,
		Run:        abi.Run{User: "warmup"},
		Servers:    []abi.Server{},
		Skills: []abi.Skill{{
			Name: "warmup-review", Description: "Review a change before it lands",
			Instructions: "{{loadout.blob.1}}",
			Resources:    []abi.Resource{{Path: "templates/report.md", Content: "{{loadout.blob.2}}"}},
		}},
	}
	secret := 1
	// Each known transport once, whatever the manifest repeats: a hostile manifest must not
	// make the request grow with it.
	for _, tr := range []string{abi.TransportStdio, abi.TransportHTTP} {
		if !slices.Contains(m.Transports, tr) {
			continue
		}
		for i := range 2 {
			s := abi.Server{
				ID: fmt.Sprintf("warmup-%s-%d", tr, i), Transport: tr, Enabled: true,
				Description: "Example server", Timeout: 30,
				ToolsRestricted: i == 0, AllowedTools: []string{"search", "fetch"},
			}
			switch tr {
			case abi.TransportStdio:
				s.Command = "/usr/bin/mcp-server"
				s.Args = []string{"--stdio", "--root", "."}
				s.Env = []abi.Pair{{Name: "API_TOKEN", Value: fmt.Sprintf("{{loadout.secret.%d}}", secret), Secret: true}, {Name: "LOG_LEVEL", Value: "info"}}
				s.HostEnv = []abi.Pair{{Name: "PATH", Value: "/usr/bin:/bin"}, {Name: "HOME", Value: "/home/warmup"}}
			case abi.TransportHTTP:
				s.URL = "https://mcp.example.com/mcp"
				s.Headers = []abi.Pair{{Name: "Authorization", Value: fmt.Sprintf("Bearer {{loadout.secret.%d}}", secret), Secret: true}, {Name: "X-Client", Value: "warmup"}}
			}
			secret++
			req.Servers = append(req.Servers, s)
		}
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(fmt.Sprintf("preinit: encode the warm-up request: %v", err)) // abi.Request always encodes
	}
	return b
}
