package conformity

import (
	"context"
	"fmt"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// nativePlugin runs a Go renderer in process through the sdk's wire path (sdk.Plugin.Render,
// the code behind the loadout_render export): the request is decoded strictly, rendered and
// encoded exactly as in the WebAssembly build.
type nativePlugin struct {
	p *sdk.Plugin
}

// Interface guard.
var _ host.Plugin = (*nativePlugin)(nil)

// Native returns a target that runs render natively with manifest m, for a renderer's own tests.
// It is safe for concurrent use when render is (a RenderFunc keeps no state).
func Native(m abi.Manifest, render sdk.RenderFunc) (Target, error) {
	p, err := sdk.New(m, render)
	if err != nil {
		return Target{}, fmt.Errorf("native plugin %s: %w", m.Name, err)
	}
	return Target{Plugin: &nativePlugin{p: p}, Engine: EngineNative, Source: "native"}, nil
}

func (n *nativePlugin) Manifest() abi.Manifest { return n.p.Manifest() }

func (n *nativePlugin) Render(ctx context.Context, request []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return n.p.Render(append([]byte(nil), request...)), nil
}
