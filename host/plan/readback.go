package plan

import (
	"errors"

	"github.com/loadout-dev/loadout/sdk/abi"
	"github.com/loadout-dev/loadout/sdk/profile/readback"
)

// ConfigServer is one server entry of a written config as the plan check reads it
// (sdk/profile/readback, the one reader of a config).
type ConfigServer = readback.Server

// Pair is a name and a value of a server entry's map (env, headers, toolExposure), in file order.
type Pair = abi.Pair

// ConfigOAuth is a server's OAuth setting as read back.
type ConfigOAuth = readback.OAuth

// ReadConfig reads a written config back through the profile with the plan check's own reader
// (readback.Reader), returning its server entries in file order and every violation of the
// profile's layout found on the way (a key the profile does not list, a value of the wrong
// type), as the plan check words them. It compares nothing with a request. content is the file
// as written, secrets substituted or masked. Safe for concurrent use.
func (p *Profile) ReadConfig(content string) ([]ConfigServer, error) {
	if p.h.serversKey == "" {
		return nil, errors.New("the profile has no config file")
	}
	c := &checker{}
	name := p.h.config.root + ":" + p.h.config.path
	cfg, vs, ok := readback.Reader{}.Read(p.Profile, content)
	c.addRead(name, vs)
	if !ok && len(c.vs) == 0 {
		c.add(name, "", RuleContent, "the file does not parse as %s", p.h.config.format)
	}
	return cfg.Servers, errors.Join(c.vs...)
}

// ConfigServers is ReadConfig's server ids: what the harness will find in the file.
func (p *Profile) ConfigServers(content string) ([]string, error) {
	servers, err := p.ReadConfig(content)
	ids := make([]string, 0, len(servers))
	for _, r := range servers {
		ids = append(ids, r.ID)
	}
	return ids, err
}

// IsConfig reports whether root:path is the profile's config file.
func (p *Profile) IsConfig(root, path string) bool {
	return p != nil && p.h.serversKey != "" && p.h.config.root == root && p.h.config.path == path
}
