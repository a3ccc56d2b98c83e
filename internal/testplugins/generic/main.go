// Command generic is a test plugin for the harnesses without a Go renderer: the generic
// mcp.json harness (whose built-in renderer is written in C) and acme, a third-party harness
// known only from its profile (host/plan/testdata/profiles/acme). It renders faithfully for the
// harness named at build time (-ldflags -X main.harness=<name>); the hostile-plan suite
// (conformity/hostile) tampers with its plan from the host side, as with any other plugin.
// Built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared (internal/testplugins).
package main

import (
	"fmt"
	"math"

	"github.com/loadout-dev/loadout/sdk"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// harness is set at build time.
var harness = "acme"

// generic is one JSON layout this renderer writes.
type generic struct {
	root, path, servers string
	typed               bool // a type key per server (the mcp.json layout)
	cwd                 bool
	timeoutMS           bool   // a timeout key in milliseconds
	skills              string // the skills directory under the config root; "" for none
	roots               []string
}

var generics = map[string]generic{
	"mcpjson": {root: abi.RootRun, path: "mcp.json", servers: "mcpServers", typed: true, timeoutMS: true, skills: "skills", roots: []string{abi.RootConfig, abi.RootRun}},
	"acme":    {root: abi.RootConfig, path: "mcp.json", servers: "servers", cwd: true, skills: "skills", roots: []string{abi.RootConfig, abi.RootRun}},
}

func init() {
	g, ok := generics[harness]
	if !ok {
		panic("generic: no layout for harness " + harness)
	}
	sdk.Register(abi.Manifest{Name: "render.generic", Version: "0.0.1", ABIVersion: abi.Version, Harness: harness,
		Transports: []string{abi.TransportStdio, abi.TransportHTTP}, NativeSkills: g.skills != "", Roots: g.roots},
		g.render)
}

func main() {}

func pairs(ps []abi.Pair) (*format.Object, bool) {
	o, secret := format.NewObject(), false
	for _, p := range ps {
		o.Set(p.Name, p.Value)
		secret = secret || p.Secret
	}
	return o, secret
}

// render writes every server as the vetted request has it, values literal.
func (g generic) render(req abi.Request) (abi.Plan, error) {
	p := abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}
	servers := format.NewObject()
	secret := false
	for _, s := range req.Servers {
		e := format.NewObject()
		if g.typed {
			e.Set("type", s.Transport)
		}
		if s.Transport == abi.TransportStdio {
			e.Set("command", s.Command)
			if len(s.Args) > 0 {
				e.Set("args", s.Args)
			}
			if len(s.Env) > 0 {
				env, sec := pairs(s.Env)
				e.Set("env", env)
				secret = secret || sec
			}
			if g.cwd && s.Cwd != "" {
				e.Set("cwd", s.Cwd)
			}
		} else {
			e.Set("url", s.URL)
			if len(s.Headers) > 0 {
				h, sec := pairs(s.Headers)
				e.Set("headers", h)
				secret = secret || sec
			}
		}
		if g.timeoutMS && s.Timeout > 0 {
			e.Set("timeout", max(int64(math.Round(s.Timeout*1000)), 1))
		}
		if s.ToolsRestricted {
			e.Set("allowedTools", append([]string{}, s.AllowedTools...))
		}
		if s.OAuth != nil {
			// The generic layouts have no OAuth keys: the setting is left out, and said so.
			p.Warnings = append(p.Warnings, *format.OAuthWarning(s, harness, []string{"oauth"}))
		}
		servers.Set(s.ID, e)
	}
	var offered []abi.Server
	for _, s := range req.Servers {
		if s.Enabled {
			offered = append(offered, s)
		}
	}
	p.Prompt = format.ServersPrompt(offered, nil)
	content, err := format.MarshalJSON(format.NewObject().Set(g.servers, servers))
	if err != nil {
		return p, err
	}
	mode := "0644"
	if secret {
		mode = "0600"
	}
	p.Files = append(p.Files, abi.File{Root: g.root, Path: g.path, Mode: mode, Format: abi.FormatJSON, Content: string(content), Secret: secret})
	if g.skills == "" {
		for _, sk := range req.Skills {
			p.Warnings = append(p.Warnings, abi.Warning{Code: "skill_unsupported", Skill: sk.Name, Message: "harness " + harness + " has no skills"})
		}
		return p, nil
	}
	skills, warns, err := format.PrepareSkills(req.Skills)
	if err != nil {
		return p, err
	}
	p.Warnings = append(p.Warnings, warns...)
	files, err := format.SkillFiles(abi.RootConfig, g.skills, skills)
	if err != nil {
		return p, fmt.Errorf("skills: %w", err)
	}
	p.Files = append(p.Files, files...)
	return p, nil
}
