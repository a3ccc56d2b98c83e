// Command claude is loadout's Claude Code renderer plugin (render.claude): built with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared, it registers render.Render with the sdk, which
// owns the plugin's exports.
package main

import (
	"github.com/loadout-dev/loadout/plugins/claude/render"
	"github.com/loadout-dev/loadout/sdk"
)

func init() { sdk.Register(render.Manifest, render.Render) }

func main() {}
