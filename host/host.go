// Package host is the loadout pipeline: parse → policy → vet → render (plugin) → check → write.
//
// A Host is built once (policies compiled, plugins pinned and compiled) and is safe for
// concurrent use: each Render is independent and stateless.
package host

import (
	"context"
	"errors"

	"github.com/loadout-dev/loadout/host/spec"
)

// RenderRequest is one render.
type RenderRequest struct {
	// Body is the request JSON, byte for byte.
	Body []byte
	// Harness, when set, overrides the request's "harness".
	Harness string
	// HostEnv is the host environment the policy filters into each stdio server's spawn
	// environment (in the CLI, loadout's own environment).
	HostEnv []spec.Pair
	// DryRun stops before anything is written.
	DryRun bool
	// Roots are the directories the plan's roots resolve to; required unless DryRun.
	Roots Roots
}

// Roots are the absolute directories a plan's named roots resolve to.
type Roots struct {
	Config   string `json:"config"`   // the harness's isolated config home
	Run      string `json:"run"`      // per-run scratch, outside the checkout
	Checkout string `json:"checkout"` // the repository
}

// Render runs the pipeline for one request.
func Render(ctx context.Context, rr RenderRequest) (*Result, error) {
	req, diags, err := spec.Parse(rr.Body)
	if err != nil {
		return nil, err
	}
	harness := req.Harness
	if rr.Harness != "" {
		harness = rr.Harness
	}
	res := &Result{
		Harness:  harness,
		DryRun:   rr.DryRun,
		Servers:  []string{},
		Skills:   []string{},
		Dropped:  diags,
		Files:    []FileResult{},
		Args:     []string{},
		Env:      []EnvVar{},
		Warnings: []Warning{},
	}
	if res.Dropped == nil {
		res.Dropped = []spec.Diagnostic{}
	}
	for _, s := range req.Servers {
		res.Servers = append(res.Servers, s.ID)
	}
	res.Resources = ResourceList{}
	for _, sk := range req.Skills {
		res.Skills = append(res.Skills, sk.Name)
		sr := SkillResources{Skill: sk.Name, Paths: []string{}}
		for _, r := range sk.Resources {
			sr.Paths = append(sr.Paths, r.RelPath)
		}
		res.Resources = append(res.Resources, sr)
	}
	return res, nil
}

// Class is the kind of failure an error from Render is, for exit codes and HTTP statuses.
type Class int

const (
	ClassInternal Class = iota // a bug or the environment
	ClassUsage                 // the caller's options are wrong
	ClassRejected              // the request is invalid or the policy denied it
	ClassPlugin                // the plugin failed or its plan failed the check
)

// Classify tells which Class err belongs to.
func Classify(err error) Class {
	var re *spec.RejectError
	if errors.As(err, &re) {
		return ClassRejected
	}
	return ClassInternal
}
