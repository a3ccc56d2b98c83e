package format

import (
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Warning codes a renderer reports for a stdio server it cannot launch as vetted.
const (
	// WarnCommandUnwrappable: the server's command cannot go through the env -i wrapper, so
	// the server is not rendered.
	WarnCommandUnwrappable = "command_unwrappable"
	// WarnEnvNameUnsupported: an env name env -S cannot pass is left out of the server's
	// environment.
	WarnEnvNameUnsupported = "env_name_unsupported"
)

// SpawnServer is WrapSpawn for a renderer: it returns the wrapped spawn of s with one warning
// per env name left out, or false with the one warning that says why s cannot be launched
// through the wrapper (the server is then not rendered).
func SpawnServer(style SpawnStyle, s abi.Server, cwd string) (Spawn, []abi.Warning, bool) {
	sp, err := WrapSpawn(style, s, cwd)
	if err != nil {
		return Spawn{}, []abi.Warning{{Code: WarnCommandUnwrappable, Server: s.ID,
			Message: err.Error() + "; the server cannot be pinned to its spawn environment and is not rendered"}}, false
	}
	var warns []abi.Warning
	for _, name := range sp.Skipped {
		warns = append(warns, abi.Warning{Code: WarnEnvNameUnsupported, Server: s.ID,
			Message: "env name " + strconv.Quote(name) + " cannot be passed through env -S; it is left out of the server's environment"})
	}
	return sp, warns, true
}

// EnvObject is the spawn's environment as a config object, in order, and whether a pair of it
// is secret.
func (sp Spawn) EnvObject() (*Object, bool) {
	env := NewObject()
	secret := false
	for _, p := range sp.Env {
		env.Set(p.Name, p.Value)
		secret = secret || p.Secret
	}
	return env, secret
}

// ServersPrompt is the prompt section that names each server a renderer offers and the tools
// it may use (ToolSummary), or "" when it offers none. name spells a tool of a server as the
// harness shows it to the model; nil shows the tool's own name.
func ServersPrompt(servers []abi.Server, name func(server, tool string) string) string {
	if len(servers) == 0 {
		return ""
	}
	b := []byte("## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n")
	for _, s := range servers {
		b = append(b, "- "+s.ID+": "+ToolSummary(s.ToolsRestricted, s.AllowedTools, func(t string) string {
			if name == nil {
				return t
			}
			return name(s.ID, t)
		})+"\n"...)
	}
	return string(b)
}

// ConfigFile is the file of a harness config that holds servers: mode 0600, since it may hold
// credentials, and Secret when the renderer put a secret in it or content holds a secret
// placeholder.
func ConfigFile(root, path, format string, content []byte, secret bool) abi.File {
	return abi.File{Root: root, Path: path, Mode: "0600", Format: format, Content: string(content),
		Secret: secret || strings.Contains(string(content), abi.PlaceholderPrefix+"secret.")}
}
