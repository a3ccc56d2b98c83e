// Package exposure turns a server's exposure and toolExposure into the tool lists a harness
// without exposure of its own enforces (docs/SECURITY.md §2.1). Pi renders exposure natively;
// Claude Code, Codex, Gemini CLI and any harness whose profile does not say so get the
// effect computed once here, by the host, as the vetted request's tool restriction: a hidden
// tool leaves the allow list and joins the deny list, a server none of whose tools stays
// exposed is not rendered, and a hidden rule the harness's lists cannot express refuses the
// server rather than exposing it. The plan check (host/plan) then holds every plugin to those
// lists exactly, so a renderer cannot get it wrong.
//
// Exposures are the spec's: direct, deferred, codemode (codemode-deferred is parsed as
// codemode) and hidden; a tool's exposure is its exact toolExposure entry, else the first
// matching "*" pattern in request order, else the server's exposure (direct when none).
package exposure

import (
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/internal/namepattern"
	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/format"
)

// The exposures a server or tool may have (host/spec validates them).
const (
	Direct   = "direct"
	Deferred = "deferred"
	Codemode = "codemode"
	Hidden   = "hidden"
)

// Codes of the refusals and the warning.
const (
	// CodeAllHidden: exposure hides every tool the server would offer; it is not rendered.
	CodeAllHidden = "exposure_all_hidden"
	// CodeUnenforceable: a toolExposure pattern (or a deny list the harness lacks) would be
	// needed to enforce the server's exposure; the server is refused rather than exposed.
	CodeUnenforceable = "exposure_unenforceable"
	// CodeUnsupported: a codemode or deferred exposure the harness has no equivalent of; the
	// tools are exposed directly.
	CodeUnsupported = "exposure_unsupported"
)

// toolName is what a name the host puts in a harness's tool lists must match (the default
// allowedTools rule, R3): every harness reads it as one exact name, and no harness splits it.
var toolName = namepattern.MustCompile(`^[A-Za-z0-9_.-]+$`, 64)

// MaxPatternWork bounds the pattern matches Apply makes for one server (patterns × allowed
// tools): a server over it is refused rather than resolved slowly.
const MaxPatternWork = 1 << 20

// Harness is what a harness can do with exposure, from its profile.
type Harness struct {
	Name string
	// Native: the harness renders exposure and toolExposure itself; Apply changes nothing.
	Native bool
	// Deny: the harness has a deny list of exact tool names.
	Deny bool
}

// Server is the tool restriction and exposure of one vetted server.
type Server struct {
	Exposure     string
	ToolExposure []abi.Pair
	Restricted   bool
	Allowed      []string
}

// Effect is the tool restriction the harness must enforce, and the exposure values it lacks.
type Effect struct {
	Restricted bool
	// Allowed are the tools the server may offer when Restricted, in request order.
	Allowed []string
	// Denied are the tools it must not offer, in request order: the exact toolExposure entries
	// that hide a tool, then the allowed tools a pattern or the server's exposure hides.
	Denied []string
	// Unsupported are the codemode and deferred values the server uses, each once, in order.
	Unsupported []string
}

// Refusal says why a server cannot be rendered: Field is relative to the server (exposure, or
// toolExposure.<name>, as the host reports its other drops).
type Refusal struct {
	Code, Field, Message string
}

// UnsupportedMessage is the warning for an exposure value harness has no equivalent of; the
// same words on every harness.
func UnsupportedMessage(value, harness string) string {
	return fmt.Sprintf("exposure %q is not supported by %s; tools are exposed directly", value, harness)
}

// Apply computes s's effect on h, or why s must be refused. With h.Native it returns s as it
// is. It never widens s: every tool Effect lets through is one s exposes.
func Apply(h Harness, s Server) (Effect, *Refusal) {
	eff := Effect{Restricted: s.Restricted, Allowed: s.Allowed}
	if h.Native || (len(s.ToolExposure) == 0 && (s.Exposure == "" || s.Exposure == Direct)) {
		return eff, nil // nothing to resolve: every tool is exposed directly
	}
	server := s.Exposure
	if server == "" {
		server = Direct
	}
	for _, v := range append([]string{server}, pairValues(s.ToolExposure)...) {
		if (v == Codemode || v == Deferred) && !slices.Contains(eff.Unsupported, v) {
			eff.Unsupported = append(eff.Unsupported, v)
		}
	}
	// exact holds each exact entry's exposure (the first of a name, as format.ToolExposure
	// reads them); denied and exposed keep request order, each name once.
	exact := make(map[string]string, len(s.ToolExposure))
	var patterns []abi.Pair
	var exposed []string
	seen := map[string]bool{}
	for _, p := range s.ToolExposure {
		if format.IsPattern(p.Name) {
			patterns = append(patterns, p)
			continue
		}
		if _, dup := exact[p.Name]; dup {
			continue
		}
		exact[p.Name] = p.Value
		listed := p.Value == Hidden || (server == Hidden && !s.Restricted)
		if listed && !toolName.MatchString(p.Name) {
			return Effect{}, &Refusal{Code: CodeUnenforceable, Field: "toolExposure." + p.Name,
				Message: fmt.Sprintf("%q would go into %s's tool lists, which take tool names matching %s only", p.Name, h.Name, toolName)}
		}
		if p.Value == Hidden {
			eff.Denied = append(eff.Denied, p.Name)
		} else {
			exposed = append(exposed, p.Name)
		}
		seen[p.Name] = true
	}
	if s.Restricted && len(patterns) > 0 && len(patterns)*len(s.Allowed) > MaxPatternWork {
		return Effect{}, &Refusal{Code: CodeUnenforceable, Field: "toolExposure." + patterns[0].Name,
			Message: fmt.Sprintf("%d patterns against %d allowed tools is more than the %d matches loadout resolves for a server; name the tools", len(patterns), len(s.Allowed), MaxPatternWork)}
	}
	field := "exposure"
	if server != Hidden {
		field = "toolExposure"
	}
	switch {
	case s.Restricted:
		eff.Allowed = nil
		kept := map[string]bool{}
		for _, t := range s.Allowed {
			e, ok := exact[t]
			if !ok {
				e, ok = format.ToolExposure(patterns, t)
			}
			if !ok {
				e = server
			}
			switch {
			case e == Hidden && !seen[t]:
				seen[t] = true
				eff.Denied = append(eff.Denied, t)
			case e != Hidden && !kept[t]:
				kept[t] = true
				eff.Allowed = append(eff.Allowed, t)
			}
		}
		if len(eff.Allowed) == 0 && (server == Hidden || len(s.Allowed) > 0) {
			return Effect{}, &Refusal{Code: CodeAllHidden, Field: field,
				Message: "exposure hides every tool the server may offer (its allowedTools); the server is not rendered"}
		}
	case server == Hidden:
		// Only tools named by an exact entry stay exposed: the harness's allow list takes
		// exact names, and a pattern cannot list the tools it would expose.
		if p, ok := firstPattern(s.ToolExposure, func(v string) bool { return v != Hidden }); ok {
			return Effect{}, &Refusal{Code: CodeUnenforceable, Field: "toolExposure." + p.Name,
				Message: fmt.Sprintf("pattern %q exposes tools of a hidden server, but %s's tool lists take exact names only; name each tool, or declare allowedTools", p.Name, h.Name)}
		}
		if len(exposed) == 0 {
			return Effect{}, &Refusal{Code: CodeAllHidden, Field: field,
				Message: "exposure is hidden and no toolExposure entry exposes a tool; the server is not rendered"}
		}
		eff.Restricted, eff.Allowed = true, exposed
	default:
		// Every tool is exposed but the hidden ones: only a deny list of exact names can hide them.
		if p, ok := firstPattern(s.ToolExposure, func(v string) bool { return v == Hidden }); ok {
			return Effect{}, &Refusal{Code: CodeUnenforceable, Field: "toolExposure." + p.Name,
				Message: fmt.Sprintf("pattern %q hides tools, but the server is not restricted by allowedTools and %s's deny list takes exact names only; name each hidden tool, or declare allowedTools", p.Name, h.Name)}
		}
	}
	if !h.Deny {
		if !eff.Restricted && len(eff.Denied) > 0 {
			return Effect{}, &Refusal{Code: CodeUnenforceable, Field: "toolExposure." + eff.Denied[0],
				Message: fmt.Sprintf("%s has no deny list, so tool %q cannot be hidden on a server that allowedTools does not restrict; declare allowedTools", h.Name, eff.Denied[0])}
		}
		eff.Denied = nil // the allow list already leaves them out
	}
	return eff, nil
}

func pairValues(ps []abi.Pair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Value
	}
	return out
}

func firstPattern(ps []abi.Pair, want func(string) bool) (abi.Pair, bool) {
	for _, p := range ps {
		if format.IsPattern(p.Name) && want(p.Value) {
			return p, true
		}
	}
	return abi.Pair{}, false
}
