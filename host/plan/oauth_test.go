package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// vettedOAuth is the OAuth setting the beta server of the fixtures gets in these tests.
var vettedOAuth = abi.OAuth{ClientID: "loadout-client", CallbackPort: 8765, Scopes: []string{"read", "write"},
	AuthServerMetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server"}

// withOAuth is the fixture input of harness with beta's vetted OAuth set.
func withOAuth(harness string) plan.Input {
	in := input(harness)
	o := vettedOAuth
	o.Scopes = append([]string(nil), o.Scopes...)
	in.Request.Servers[1].OAuth = &o
	return in
}

const piOAuth = `"oauth":{"clientId":"loadout-client","callbackPort":8765,"scope":"read write",` +
	`"authServerMetadataUrl":"https://auth.example.com/.well-known/oauth-authorization-server"},`

// piOAuthPlan renders beta's OAuth the way Pi reads it.
func piOAuthPlan(oauth string) *abi.Plan {
	p := piPlan()
	p.Files[0].Content = strings.Replace(p.Files[0].Content, `"exposure":"hidden"`, oauth+`"exposure":"hidden"`, 1)
	return p
}

const codexOAuth = `scopes = ["read", "write"]

[mcp_servers.beta.oauth]
client_id = "loadout-client"
callback_port = 8765
`

func codexOAuthPlan(oauth string) *abi.Plan {
	p := codexPlan()
	p.Files[0].Content += oauth
	return p
}

// copilotOAuth renders beta's client id and scopes the way Copilot CLI reads them: flat keys
// of the server (docs/FORMATS.md §5.2).
const copilotOAuth = `"oauthClientId":"loadout-client","oauthScopes":["read","write"],`

// copilotOAuthPlan is a plan the copilot renderer could return for vetted("copilot") with
// oauth (the keys of beta's entry) added.
func copilotOAuthPlan(oauth string) *abi.Plan {
	config := strings.Replace(strings.Replace(claudeConfig, `"url":`, oauth+`"url":`, 1),
		`"Bearer {{loadout.secret.2}}"}`, `"Bearer {{loadout.secret.2}}"},"tools":["search"]`, 1)
	return &abi.Plan{
		Files: []abi.File{
			{Root: abi.RootConfig, Path: "mcp-config.json", Mode: "0600", Format: abi.FormatJSON, Content: config, Secret: true},
			{Root: abi.RootConfig, Path: "skills/demo/SKILL.md", Mode: "0644", Format: abi.FormatMarkdown, Content: skillMD},
		},
		Args: []string{"--disable-builtin-mcps", "--no-auto-update"},
		Env:  []abi.Pair{{Name: "COPILOT_HOME", Value: "{{loadout.root.config}}"}, {Name: "COPILOT_ALLOW_ALL", Value: "false"}, {Name: "LOADOUT_SPAWN_DOLLAR", Value: "$"}},
	}
}

func TestCheckOAuth(t *testing.T) {
	t.Parallel()
	metadataWarning := []abi.Warning{{Code: "oauth_unsupported", Server: "beta", Message: "no key for the metadata URL"}}
	tests := []struct {
		name     string
		plan     *abi.Plan
		in       plan.Input
		warnings []abi.Warning
		want     []string // rules; none: accepted
	}{
		{name: "pi renders every value", plan: piOAuthPlan(piOAuth), in: withOAuth("pi")},
		{name: "codex without a metadata key, with a warning", plan: codexOAuthPlan(codexOAuth), in: withOAuth("codex"), warnings: metadataWarning},
		{name: "codex without a metadata key and no warning", plan: codexOAuthPlan(codexOAuth), in: withOAuth("codex"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a changed client id", plan: piOAuthPlan(strings.Replace(piOAuth, `"loadout-client"`, `"attacker-client"`, 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a changed port", plan: piOAuthPlan(strings.Replace(piOAuth, "8765", "8766", 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a changed metadata URL", plan: piOAuthPlan(strings.Replace(piOAuth, "auth.example.com", "auth.evil.example", 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		{name: "an added scope", plan: piOAuthPlan(strings.Replace(piOAuth, "read write", "read write admin", 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		// Pi reads its scope as one string (config.oauthScopes string), and takes a metadata URL
		// only over https or on a loopback host (config.oauthMetadataUrls).
		{name: "scopes as a list where the harness reads a string", plan: piOAuthPlan(strings.Replace(piOAuth, `"read write"`, `["read","write"]`, 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a vetted metadata URL the harness does not take", plan: piOAuthPlan(strings.Replace(piOAuth, "https://auth.example.com", "http://auth.example.com", 1)),
			in: func() plan.Input {
				in := withOAuth("pi")
				in.Request.Servers[1].OAuth.AuthServerMetadataURL = strings.Replace(in.Request.Servers[1].OAuth.AuthServerMetadataURL, "https:", "http:", 1)
				return in
			}(), want: []string{plan.RuleServerMismatch}},
		{name: "a metadata URL on a loopback host", plan: piOAuthPlan(strings.Replace(piOAuth, "https://auth.example.com", "http://127.0.0.1:9", 1)),
			in: func() plan.Input {
				in := withOAuth("pi")
				in.Request.Servers[1].OAuth.AuthServerMetadataURL = strings.Replace(in.Request.Servers[1].OAuth.AuthServerMetadataURL, "https://auth.example.com", "http://127.0.0.1:9", 1)
				return in
			}()},
		{name: "a changed codex port", plan: codexOAuthPlan(strings.Replace(codexOAuth, "8765", "9999", 1)), in: withOAuth("codex"), warnings: metadataWarning,
			want: []string{plan.RuleServerMismatch}},
		{name: "codex scopes changed", plan: codexOAuthPlan(strings.Replace(codexOAuth, `"write"`, `"admin"`, 1)), in: withOAuth("codex"), warnings: metadataWarning,
			want: []string{plan.RuleServerMismatch}},
		{name: "an oauth key the profile does not list", plan: piOAuthPlan(`"oauth":{"clientSecret":"x","clientId":"loadout-client","callbackPort":8765,"scope":"read write","authServerMetadataUrl":"https://auth.example.com/.well-known/oauth-authorization-server"},`),
			in: withOAuth("pi"), want: []string{plan.RuleConfigKey}},
		{name: "oauth the request never set", plan: piOAuthPlan(`"oauth":{"authServerMetadataUrl":"https://auth.evil.example/meta"},`), in: input("pi"),
			want: []string{plan.RuleServerMismatch}},
		{name: "codex scopes the request never set", plan: codexOAuthPlan("scopes = [\"admin\"]\n"), in: input("codex"),
			want: []string{plan.RuleServerMismatch}},
		{name: "oauth left out without a warning", plan: piPlan(), in: withOAuth("pi"), want: []string{plan.RuleServerMismatch}},
		{name: "oauth left out with a warning", plan: piPlan(), in: withOAuth("pi"), warnings: metadataWarning},
		{name: "oauth left out with a warning of another code", plan: piPlan(), in: withOAuth("pi"),
			warnings: []abi.Warning{{Code: "timeout_adjusted", Server: "beta", Message: "x"}}, want: []string{plan.RuleServerMismatch}},
		{name: "a client id of the wrong type", plan: piOAuthPlan(strings.Replace(piOAuth, `"loadout-client"`, `7`, 1)), in: withOAuth("pi"),
			want: []string{plan.RuleServerMismatch}},
		// Copilot: a flat client-id key (meaning oauthClientId) is read like the oauth object's clientId.
		{name: "copilot renders the client id and scopes", plan: copilotOAuthPlan(copilotOAuth), in: withOAuth("copilot"), warnings: metadataWarning},
		{name: "copilot without a port and metadata key and no warning", plan: copilotOAuthPlan(copilotOAuth), in: withOAuth("copilot"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a changed copilot client id", plan: copilotOAuthPlan(strings.Replace(copilotOAuth, `"loadout-client"`, `"attacker-client"`, 1)),
			in: withOAuth("copilot"), warnings: metadataWarning, want: []string{plan.RuleServerMismatch}},
		{name: "a copilot client id of the wrong type", plan: copilotOAuthPlan(strings.Replace(copilotOAuth, `"loadout-client"`, `["loadout-client"]`, 1)),
			in: withOAuth("copilot"), warnings: metadataWarning, want: []string{plan.RuleServerMismatch}},
		{name: "a copilot client id the request never set", plan: copilotOAuthPlan(`"oauthClientId":"attacker-client",`), in: input("copilot"),
			want: []string{plan.RuleServerMismatch}},
		{name: "a widened copilot scope", plan: copilotOAuthPlan(strings.Replace(copilotOAuth, `"write"`, `"write","admin"`, 1)),
			in: withOAuth("copilot"), warnings: metadataWarning, want: []string{plan.RuleServerMismatch}},
		{name: "the copilot client id left out without a warning", plan: copilotOAuthPlan(`"oauthScopes":["read","write"],`),
			in: func() plan.Input {
				in := withOAuth("copilot")
				in.Request.Servers[1].OAuth.CallbackPort, in.Request.Servers[1].OAuth.AuthServerMetadataURL = 0, ""
				return in
			}(),
			want: []string{plan.RuleServerMismatch}},
		{name: "copilot renders every member it has a key for", plan: copilotOAuthPlan(copilotOAuth),
			in: func() plan.Input {
				in := withOAuth("copilot")
				in.Request.Servers[1].OAuth.CallbackPort, in.Request.Servers[1].OAuth.AuthServerMetadataURL = 0, ""
				return in
			}()},
		{name: "a copilot oauth object the profile does not list", plan: copilotOAuthPlan(`"oauth":{"clientId":"loadout-client"},` + copilotOAuth),
			in: withOAuth("copilot"), warnings: metadataWarning, want: []string{plan.RuleConfigKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.plan.Warnings = tc.warnings
			err := checkPlan(tc.plan, tc.in)
			if len(tc.want) == 0 {
				require.NoError(t, err)
				return
			}
			assert.Subset(t, rules(err), tc.want, "%v", err)
		})
	}
}

// A secret placeholder inside an oauth object is not where the vetted request put it.
func TestCheckOAuthSecretPlacement(t *testing.T) {
	t.Parallel()
	p := piOAuthPlan(strings.Replace(piOAuth, `"loadout-client"`, `"`+secretAuth+`"`, 1))
	assert.Contains(t, rules(checkPlan(p, withOAuth("pi"))), plan.RuleSecretPlacement)
}

// The test harness acme carries lifecycle and idleTimeout keys.
func TestCheckLifecycle(t *testing.T) {
	t.Parallel()
	in := input("acme")
	in.Request.Servers[0].Lifecycle = "lazy"
	in.Request.Servers[0].IdleTimeout = 15
	render := func(extra string) *abi.Plan {
		p := acmePlan()
		p.Files[0].Content = strings.Replace(p.Files[0].Content, `"args":["serve"]`, `"args":["serve"]`+extra, 1)
		return p
	}
	require.NoError(t, checkPlan(render(`,"lifecycle":"lazy","idleTimeout":15`), in))
	for _, bad := range []string{
		`,"lifecycle":"keep-alive","idleTimeout":15`,
		`,"lifecycle":"lazy","idleTimeout":60`,
		`,"lifecycle":"lazy"`,
		`,"lifecycle":1,"idleTimeout":15`,
	} {
		assert.Contains(t, rules(checkPlan(render(bad), in)), plan.RuleServerMismatch, bad)
	}
	// Left out: only a lifecycle_unsupported warning for the server excuses it.
	left := render("")
	left.Warnings = []abi.Warning{{Code: "timeout_adjusted", Server: "alpha", Message: "x"}}
	assert.Contains(t, rules(checkPlan(left, in)), plan.RuleServerMismatch, "left out with another warning")
	left.Warnings = []abi.Warning{{Code: abi.WarnLifecycleUnsupported, Server: "alpha", Message: "no such setting"}}
	assert.NoError(t, checkPlan(left, in), "left out with a lifecycle_unsupported warning")
	// A lifecycle the request never set is refused too.
	assert.Contains(t, rules(checkPlan(render(`,"lifecycle":"eager"`), input("acme"))), plan.RuleServerMismatch)
}

func TestProfileOAuthKeys(t *testing.T) {
	t.Parallel()
	base := `harness: h
paths: [{root: config, path: mcp.json}]
config:
  root: config
  path: mcp.json
  format: json
  servers: mcpServers
  serverKeys: {command: command, url: url%s}
%s
valueSyntax: literal
tools: {in: config, names: {exact: true}}
`
	for _, tc := range []struct{ name, keys, oauth, want string }{
		{"oauth keys without an oauth key", "", "  oauthKeys: {clientId: clientId}", "no server key means oauth"},
		{"an oauth key without its keys", ", oauth: oauth", "", "its keys must be listed"},
		{"an unknown meaning", ", oauth: oauth", "  oauthKeys: {secret: clientSecret}", "none of"},
		{"two keys, one meaning", ", oauth: oauth", "  oauthKeys: {client_id: clientId, clientId: clientId}", "both mean clientId"},
		{"a flat client id and the oauth object's", ", oauth: oauth, oauthClientId: oauthClientId", "  oauthKeys: {clientId: clientId}", "both mean the oauth client id"},
		{"two flat client-id keys", ", oauthClientId: oauthClientId, client_id: oauthClientId", "", "both mean oauthClientId"},
	} {
		_, err := plan.ParseProfile([]byte(strings.Replace(strings.Replace(base, "%s", tc.keys, 1), "%s", tc.oauth, 1)))
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
}
