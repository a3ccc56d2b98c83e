package main

import (
	"testing"

	"github.com/loadout-dev/loadout/conformity/conformitytest"
)

// TestConformity runs the whole conformity corpus on this renderer natively, through the sdk's
// wire path, with the same checks the suite applies to the WebAssembly build.
func TestConformity(t *testing.T) { conformitytest.RunNative(t, manifest, render) }
