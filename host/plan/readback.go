package plan

import (
	"errors"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// ConfigServer is one server entry of a written config as the plan check reads it: what each key
// holds, by the meaning the profile gives it, the strings as written (read them as the harness
// does with the profile's ReadLiteral, ReadValue, ReadHeader and ReadURL). A nil pointer or a
// false Has* is a key the entry does not carry.
type ConfigServer struct {
	ID                                             string
	Type, Command, URL, Cwd, Description, Exposure *string
	Args                                           []string
	Env, Headers, ToolExposure                     []Pair
	Enabled                                        *bool
	AllowTools                                     []string
	HasAllowTools                                  bool
	DenyTools                                      []string
	// Timeouts are the values of every key meaning timeout, in the profile's unit.
	Timeouts []float64
	// OAuth is what the keys meaning oauth, oauthClientId and oauthScopes hold.
	OAuth ConfigOAuth
	// Lifecycle and IdleTimeout are the keys meaning lifecycle and idleTimeout, as written.
	Lifecycle, IdleTimeout *string
}

// Pair is a name and a value of a server entry's map (env, headers, toolExposure), in file order.
type Pair = abi.Pair

// ConfigOAuth is a server's OAuth setting as read back.
type ConfigOAuth struct {
	// Present: a key meaning oauth is there (the flat keys set ClientID and Scopes only).
	Present               bool
	ClientID, MetadataURL *string
	CallbackPort          *int64
	Scopes                []string
	HasScopes             bool
}

// ReadConfig reads a written config back through the profile with the plan check's own reader,
// returning its server entries in file order and every violation of the profile's layout found
// on the way (a key the profile does not list, a value of the wrong type). It compares nothing
// with a request. content is the file as written, secrets substituted or masked. Safe for
// concurrent use.
func (p *Profile) ReadConfig(content string) ([]ConfigServer, error) {
	rs, err := p.readConfig(content)
	out := make([]ConfigServer, 0, len(rs))
	for _, r := range rs {
		out = append(out, ConfigServer{
			ID: r.id, Type: r.typ, Command: r.command, URL: r.url, Cwd: r.cwd, Description: r.description,
			Exposure: r.exposure, Args: r.args, Env: r.env, Headers: r.headers, ToolExposure: r.toolExposure,
			Enabled: r.enabled, AllowTools: r.enabledTools, HasAllowTools: r.hasEnabledTools, DenyTools: r.deniedTools,
			Timeouts: r.timeouts, Lifecycle: r.oauth.lifecycle, IdleTimeout: r.oauth.idleTimeout,
			OAuth: ConfigOAuth{Present: r.oauth.present, ClientID: r.oauth.clientID, MetadataURL: r.oauth.metadataURL,
				CallbackPort: r.oauth.callbackPort, Scopes: r.oauth.scopes, HasScopes: r.oauth.hasScopes},
		})
	}
	return out, err
}

// ConfigServers reads a config file back through the profile with the plan check's own reader
// (readJSONConfig, readTOMLConfig): the ids of the servers it holds, in file order, and every
// violation of the profile's layout found on the way (a top-level key it does not allow, a
// server entry that is not an object). It compares nothing with a request: it says what the
// harness will find in the file. content is the file as written, secrets substituted or
// masked (the layout does not depend on them). Safe for concurrent use.
func (p *Profile) ConfigServers(content string) ([]string, error) {
	servers, err := p.readConfig(content)
	ids := make([]string, 0, len(servers))
	for _, r := range servers {
		ids = append(ids, r.id)
	}
	return ids, err
}

// readConfig runs the check's reader of p's config over content, collecting its violations.
func (p *Profile) readConfig(content string) ([]rendered, error) {
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
	return servers, errors.Join(c.vs...)
}

// IsConfig reports whether root:path is the profile's config file.
func (p *Profile) IsConfig(root, path string) bool {
	return p != nil && p.h.serversKey != "" && p.h.config.root == root && p.h.config.path == path
}
