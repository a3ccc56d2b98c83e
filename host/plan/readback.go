package plan

import (
	"errors"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// ConfigServers reads a config file back through the profile with the plan check's own reader
// (readJSONConfig, readTOMLConfig): the ids of the servers it holds, in file order, and every
// violation of the profile's layout found on the way (a top-level key it does not allow, a
// server entry that is not an object). It compares nothing with a request: it says what the
// harness will find in the file. content is the file as written, secrets substituted or
// masked (the layout does not depend on them). Safe for concurrent use.
func (p *Profile) ConfigServers(content string) ([]string, error) {
	h := p.h
	if h.serversKey == "" {
		return nil, errors.New("the profile has no config file")
	}
	c := &checker{in: Input{Profile: p, Manifest: abi.Manifest{Harness: p.Harness}}, h: h, lim: DefaultLimits,
		secrets: map[string][]Secret{}, blobs: map[string]bool{}, offered: map[string]bool{}}
	name := h.config.root + ":" + h.config.path
	var servers []rendered
	var ok bool
	if h.config.format == abi.FormatJSON {
		servers, _, ok = c.readJSONConfig(name, content)
	} else {
		servers, _, ok = c.readTOMLConfig(name, content)
	}
	if !ok && len(c.vs) == 0 {
		c.add(name, "", RuleContent, "the file does not parse as %s", h.config.format)
	}
	ids := make([]string, 0, len(servers))
	for _, r := range servers {
		ids = append(ids, r.id)
	}
	return ids, errors.Join(c.vs...)
}

// IsConfig reports whether root:path is the profile's config file.
func (p *Profile) IsConfig(root, path string) bool {
	return p != nil && p.h.serversKey != "" && p.h.config.root == root && p.h.config.path == path
}
