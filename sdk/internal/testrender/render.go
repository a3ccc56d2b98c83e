// Package testrender is the renderer the sdk's own tests run natively and, built as
// sdk/internal/testplugin, through the wasm exports: it writes one file per server and fails
// on purpose for servers whose id asks for it ("panic", "unsupported", "plain-error").
package testrender

import (
	"errors"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Manifest is the test plugin's manifest.
var Manifest = abi.Manifest{
	Name:       "render.sdktest",
	Version:    "1.0.0",
	ABIVersion: abi.Version,
	Harness:    "sdktest",
	Transports: []string{abi.TransportStdio, abi.TransportHTTP},
	Roots:      []string{abi.RootRun},
}

// Render writes servers/<id>.txt holding the server's command or URL for each server.
func Render(req abi.Request) (abi.Plan, error) {
	var plan abi.Plan
	for _, s := range req.Servers {
		switch s.ID {
		case "panic":
			panic("boom in " + s.ID)
		case "unsupported":
			return abi.Plan{}, &abi.Error{Code: abi.CodeUnsupported, Message: "cannot render " + s.ID}
		case "plain-error":
			return abi.Plan{}, errors.New("plain failure")
		}
		plan.Files = append(plan.Files, abi.File{
			Root:    abi.RootRun,
			Path:    "servers/" + s.ID + ".txt",
			Mode:    "0644",
			Format:  abi.FormatText,
			Content: s.Command + s.URL,
		})
		plan.Args = append(plan.Args, "--server", s.ID)
	}
	for _, sk := range req.Skills {
		plan.Warnings = append(plan.Warnings, abi.Warning{Code: "skills_unsupported", Message: "skills are not rendered", Skill: sk.Name})
	}
	return plan, nil
}
