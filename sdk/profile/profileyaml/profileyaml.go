// Package profileyaml reads a harness profile (profile.yaml, docs/PROFILES.md) into the model of
// sdk/profile, strictly: an unknown key anywhere is an error naming it. It also writes a profile
// as a Go literal (GoSource), which a plugin embeds instead of its YAML so that no YAML reader
// is compiled into, or runs in, the plugin. Functions here are safe for concurrent use.
package profileyaml

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/loadout-dev/loadout/sdk/profile"
)

// Parse decodes data strictly and compiles it (profile.Compile).
func Parse(data []byte) (*profile.Profile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p profile.Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	// The order of config.pinned (the keys are written first, in the profile's order) and of
	// config.serverKeys (the order of a server's keys).
	var doc struct {
		Config struct {
			Pinned     yaml.Node `yaml:"pinned"`
			ServerKeys yaml.Node `yaml:"serverKeys"`
		} `yaml:"config"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if n := doc.Config.Pinned; n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			p.Config.PinnedOrder = append(p.Config.PinnedOrder, n.Content[i].Value)
		}
	}
	if n := doc.Config.ServerKeys; n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			p.Config.ServerKeysOrder = append(p.Config.ServerKeysOrder, n.Content[i].Value)
		}
	}
	if err := profile.Compile(&p); err != nil {
		return nil, err
	}
	return &p, nil
}
