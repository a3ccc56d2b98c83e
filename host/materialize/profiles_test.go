package materialize_test

import (
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/plugins"
)

// acmeProfile is a third-party harness's profile whose config is TOML, for the tests of how
// secrets are spelled in a format no built-in harness uses for its config.
const acmeProfile = `harness: acme
paths:
  - {root: config, path: agent.toml}
  - {root: checkout, path: ".cat-context/**"}
config: {root: config, path: agent.toml, format: toml, servers: servers,
  serverKeys: {command: command, args: args, env: env, url: url, headers: headers, allowedTools: allowTools}}
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`

var profiles = func() plan.Profiles {
	ps, err := plan.LoadProfiles(plugins.Profiles)
	if err != nil {
		panic(err)
	}
	acme, err := plan.ParseProfile([]byte(acmeProfile))
	if err != nil {
		panic(err)
	}
	ps["acme"] = acme
	return ps
}()

// acmeConfig is a faithful agent.toml of checkInput's servers; beta's header value is spelled
// with quote (a TOML basic string by default).
func acmeConfig(quote string) string {
	return "[servers.alpha]\ncommand = \"/usr/bin/alpha\"\nargs = [\"serve\"]\nenv = { API_KEY = \"" + secretKey + "\", MODE = \"test\" }\n" +
		"[servers.beta]\nurl = \"https://mcp.example.com/mcp\"\nheaders = { Authorization = " + quote + "Bearer " + secretAuth + quote + " }\n"
}
