package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// attackKey is the context key of the attack a render is under.
type attackKey struct{}

// WithAttack returns ctx for a render under the named attack: a plugin Wrap returned then
// tampers with what crosses its boundary. The plugin itself gets the request the host sends
// (or the attack's lie), never the attack's name.
func WithAttack(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, attackKey{}, name)
}

// ApplyError is an attack that could not be applied to what the plugin returned (its target
// is missing, or the plugin did not render the request the attack gave it): the attack was not
// tried, which never counts as refused.
type ApplyError struct {
	Attack string
	Err    error
}

func (e *ApplyError) Error() string {
	return "attack " + e.Attack + " could not be applied: " + e.Err.Error()
}

func (e *ApplyError) Unwrap() error { return e.Err }

// plugin is a plugin whose output an attack tampers with on the host's side, between the
// plugin's render and the host's plan check.
type plugin struct {
	inner host.Plugin
	l     layout
}

// Wrap returns p as a hostile plugin of the harness prof describes: a render whose context
// names an attack (WithAttack) gets the attack's lie in the request p receives and the
// attack's edits in the plan p returns, before the host decodes and checks it; any other render
// is p's, byte for byte. What the attacks need to know about the harness is read from prof and
// p's manifest. The result is safe for concurrent use when p is.
func Wrap(p host.Plugin, prof *plan.Profile) host.Plugin {
	return &plugin{inner: p, l: layoutOf(prof, p.Manifest())}
}

func (w *plugin) Manifest() abi.Manifest { return w.inner.Manifest() }

func (w *plugin) Render(ctx context.Context, body []byte) ([]byte, error) {
	name, ok := ctx.Value(attackKey{}).(string)
	if !ok {
		return w.inner.Render(ctx, body)
	}
	a, known := Lookup(name)
	if !known {
		return nil, &ApplyError{Attack: name, Err: errors.New("no such attack")}
	}
	var req abi.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &ApplyError{Attack: name, Err: fmt.Errorf("decode the request: %w", err)}
	}
	vetted := req.Clone()
	var restore map[string]string
	if a.request != nil {
		var err error
		if restore, err = a.request(&req); err != nil {
			return nil, &ApplyError{Attack: name, Err: err}
		}
		if body, err = json.Marshal(req); err != nil {
			return nil, &ApplyError{Attack: name, Err: err}
		}
	}
	out, err := w.inner.Render(ctx, body)
	if err != nil {
		return out, err
	}
	p, err := plan.Decode(out)
	if err != nil {
		return nil, &ApplyError{Attack: name, Err: fmt.Errorf("the plugin returned no plan: %w", err)}
	}
	for m, v := range restore {
		for i := range p.Files {
			p.Files[i].Content = strings.ReplaceAll(p.Files[i].Content, m, v)
		}
	}
	if a.plan != nil {
		if err := a.plan(&w.l, p, vetted); err != nil {
			return nil, &ApplyError{Attack: name, Err: err}
		}
	}
	return json.Marshal(p)
}
