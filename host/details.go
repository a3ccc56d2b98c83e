package host

import (
	"strings"

	"github.com/loadout-dev/loadout/host/instance"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// serverDetails describes each server of areq, the vetted plugin request of p, in order: its
// source, scope, instance key and credentials. Request text (sharedAuthority) is flattened to
// one line and every secret spelling in it masked.
func serverDetails(p *Prepared, areq abi.Request) ([]ServerDetail, error) {
	secrets := map[string]string{}
	for _, s := range p.Vetted.Secrets() {
		secrets[s.Placeholder] = s.Value
	}
	origins := p.Vetted.Origins()
	mask := p.Vetted.Redactor()
	out := make([]ServerDetail, 0, len(areq.Servers))
	for k, s := range areq.Servers {
		src := &p.Request.Servers[origins[k]]
		key, err := instance.Key(src.Scope, s, secrets)
		if err != nil {
			return nil, err
		}
		d := ServerDetail{ID: s.ID, Source: src.Source, Scope: src.Scope, InstanceKey: key, Credentials: src.Credentials}
		if src.Credentials == spec.CredentialsShared {
			d.SharedAuthority = mask.String(strings.TrimSpace(spec.OneLine(src.SharedAuthority)))
		}
		out = append(out, d)
	}
	return out, nil
}

// SharedPromptHeading starts the section the host adds to every plugin's prompt when a kept
// server is shared: one line per such server, "- <id>: " and its SharedNotice.
const SharedPromptHeading = "## Shared credentials"

// withSharedNotices is prompt followed by the shared-credential section, when a server of
// details is shared and names its authority. The host adds it, not each plugin, so that every
// harness's agent is told whose credential it uses.
func withSharedNotices(prompt string, details []ServerDetail, mask *redact.Redactor) string {
	var b strings.Builder
	for _, d := range details {
		if d.Credentials != spec.CredentialsShared || d.SharedAuthority == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(SharedPromptHeading + "\n\n")
		}
		b.WriteString("- " + d.ID + ": " + SharedNotice(d.SharedAuthority) + "\n")
	}
	if b.Len() == 0 {
		return prompt
	}
	switch {
	case prompt == "":
	case strings.HasSuffix(prompt, "\n"):
		prompt += "\n"
	default:
		prompt += "\n\n"
	}
	// SharedAuthority is masked already; the whole section is masked again, so that no
	// secret spelling can form across the id and the text.
	return prompt + mask.String(b.String())
}
