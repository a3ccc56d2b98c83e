package main

import "github.com/loadout-dev/loadout/sdk"

func init() { sdk.Register(manifest, render) }

func main() {}
