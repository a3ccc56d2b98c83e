package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

// quotingRules copy the kept server's secret header into a deny reason (of the other server),
// a drop reason and a warning.
const quotingRules = `package loadout.quoting

deny contains {"server": i, "code": "quoted_deny", "msg": sprintf("refused, unlike %s", [input.servers[0].headers.Authorization])} if {
	some i, s in input.servers
	s.id == "refused"
}

drop contains {"server": i, "field": "headers", "key": "X-Drop", "code": "quoted_drop", "msg": sprintf("dropped next to %s", [s.headers.Authorization])} if {
	some i, s in input.servers
	s.headers["X-Drop"]
}

warn contains {"server": i, "code": "quoted_warn", "msg": sprintf("kept with %s", [s.headers.Authorization])} if {
	some i, s in input.servers
	s.id == "kept"
}
`

// The decision a Vetted carries into the result has every secret masked in its messages, the
// reasons of a refused server included; the caller's decision is left as it was.
func TestVetMasksTheDecision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := New(ctx, Config{FS: withDefaults(t, map[string]string{"loadout/quoting/quoting.rego": quotingRules})})
	require.NoError(t, err)
	req, _, err := spec.Parse([]byte(`{"mcpServers":[
		{"id":"kept","transport":"http","url":"https://a.example.com/mcp","headers":{"Authorization":"Bearer kept-secret-1","X-Drop":"x"}},
		{"id":"refused","transport":"http","url":"https://b.example.com/mcp","headers":{"Authorization":"Bearer refused-secret-2"}}]}`))
	require.NoError(t, err)
	d, err := e.Decide(ctx, req, nil, "claude")
	require.NoError(t, err)
	v, err := Vet(req, d, nil, VetOptions{})
	require.NoError(t, err)

	var msgs []string
	vd := v.Decision()
	for _, sd := range vd.Servers {
		for _, r := range sd.Reasons {
			msgs = append(msgs, r.Code+": "+r.Message)
		}
		for _, dr := range sd.Drop {
			msgs = append(msgs, dr.Reason.Code+": "+dr.Reason.Message)
		}
	}
	for _, w := range vd.Warnings {
		msgs = append(msgs, w.Code+": "+w.Message)
	}
	assert.Equal(t, []string{
		"quoted_drop: dropped next to [REDACTED]",
		"quoted_deny: refused, unlike [REDACTED]",
		"quoted_warn: kept with [REDACTED]",
	}, msgs)
	assert.Contains(t, d.Servers[1].Reasons[0].Message, "kept-secret-1", "Vet leaves the caller's decision as it was")
	for _, m := range msgs {
		assert.False(t, strings.Contains(m, "secret-"), "a secret in %q", m)
	}
}
