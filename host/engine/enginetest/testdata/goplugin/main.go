// Command goplugin is a renderer plugin written directly against the ABI (sdk/abi) with
// //go:wasmexport, the shape of a Go-built plugin: a reactor whose _initialize runs package
// init, importing the WASI functions the Go runtime needs. enginetest builds it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o goplugin.wasm .
//
// render decodes the request and returns a plan with one JSON file per server and one
// SKILL.md per skill; it also reports how many bytes it received.
package main

import (
	"encoding/json"
	"strconv"
	"unsafe"

	"github.com/loadout-dev/loadout/sdk/abi"
)

func main() {}

// in and out keep the buffers the host reads and writes reachable for the garbage collector.
var in, out []byte

//go:wasmexport loadout_abi_version
func abiVersion() int32 { return abi.Version }

//go:wasmexport loadout_alloc
func alloc(n int32) int32 {
	in = make([]byte, n)
	if n == 0 {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(&in[0])))
}

func ret(b []byte) int64 {
	out = b
	if len(b) == 0 {
		return 0
	}
	return int64(uintptr(unsafe.Pointer(&out[0])))<<32 | int64(len(out))
}

//go:wasmexport loadout_manifest
func manifest() int64 {
	b, _ := json.Marshal(abi.Manifest{
		Name: "render.goplugin", Version: "1.0.0", ABIVersion: abi.Version, Harness: "goplugin",
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, Roots: []string{abi.RootConfig},
	})
	return ret(b)
}

//go:wasmexport loadout_render
func render(ptr, n int32) int64 {
	var req abi.Request
	if err := json.Unmarshal(in[:n], &req); err != nil {
		b, _ := json.Marshal(abi.ErrorResponse{Error: abi.Error{Code: abi.CodeInvalidInput, Message: err.Error()}})
		return ret(b)
	}
	plan := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}
	for _, s := range req.Servers {
		content, _ := json.Marshal(s)
		plan.Files = append(plan.Files, abi.File{Root: abi.RootConfig, Path: "servers/" + s.ID + ".json", Mode: "0600", Format: abi.FormatJSON, Content: string(content), Secret: true})
	}
	for _, sk := range req.Skills {
		plan.Files = append(plan.Files, abi.File{Root: abi.RootConfig, Path: "skills/" + sk.Name + "/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown,
			Content: "---\nname: " + sk.Name + "\ndescription: " + strconv.Quote(sk.Description) + "\n---\n" + sk.Instructions})
	}
	plan.Prompt = "received " + strconv.Itoa(int(n)) + " bytes"
	b, _ := json.Marshal(plan)
	return ret(b)
}
