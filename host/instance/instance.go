// Package instance computes a kept server's instance key: the identity a platform shares one
// server process or connection by. Two servers with the same key in the same scope are the
// same connection, made from the same values, so one process can serve both runs.
//
// The key is the lowercase hex SHA-256 of the canonical JSON (docs/INSTANCES.md) of
//
//	{"scope": <scope>, "server": {<every field of the vetted server but exposure and toolExposure>}}
//
// with objects' members sorted by name, no insignificant whitespace, every list member
// present (empty when unset), env, headers and hostEnv as [name, value] pairs sorted by name
// and then value (so their order never matters), and each secret value written as
// "{{sha256:<hex of the value>}}": the document never holds a secret, only its digest.
package instance

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Document is the canonical JSON the key of s in scope is the digest of. secrets maps each
// secret placeholder ({{loadout.secret.N}}) s may hold to its value.
func Document(scope string, s abi.Server, secrets map[string]string) ([]byte, error) {
	text := func(v string) string {
		if !strings.Contains(v, abi.PlaceholderPrefix) {
			return v
		}
		for ph, val := range secrets {
			if strings.Contains(v, ph) {
				sum := sha256.Sum256([]byte(val))
				v = strings.ReplaceAll(v, ph, "{{sha256:"+hex.EncodeToString(sum[:])+"}}")
			}
		}
		return v
	}
	pairs := func(ps []abi.Pair) [][2]string {
		out := make([][2]string, len(ps))
		for i, p := range ps {
			out[i] = [2]string{p.Name, text(p.Value)}
		}
		slices.SortFunc(out, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
		return out
	}
	list := func(ss []string) []string {
		if ss == nil {
			return []string{}
		}
		return ss
	}
	// A map marshals with its keys sorted: the member order is canonical.
	doc := map[string]any{
		"scope": scope,
		"server": map[string]any{
			"id":              s.ID,
			"transport":       s.Transport,
			"command":         s.Command,
			"args":            list(s.Args),
			"env":             pairs(s.Env),
			"hostEnv":         pairs(s.HostEnv),
			"cwd":             s.Cwd,
			"url":             s.URL,
			"headers":         pairs(s.Headers),
			"toolsRestricted": s.ToolsRestricted,
			"allowedTools":    list(s.AllowedTools),
			"description":     s.Description,
			"enabled":         s.Enabled,
			"timeout":         s.Timeout,
		},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("server %s: instance key: %w", s.ID, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Key is the instance key of s in scope: the lowercase hex SHA-256 of Document.
// It fails only for a value JSON cannot hold (a timeout that is not a finite number).
func Key(scope string, s abi.Server, secrets map[string]string) (string, error) {
	doc, err := Document(scope, s, secrets)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:]), nil
}
