// Command testplugin is testrender built as a plugin: the sdk's tests compile it to
// WebAssembly (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared) to exercise the exports.
package main

import (
	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/internal/testrender"
)

func init() { sdk.Register(testrender.Manifest, testrender.Render) }

func main() {}
