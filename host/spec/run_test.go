package spec_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/spec"
)

func TestParseRunGroups(t *testing.T) {
	t.Parallel()
	req, diags := mustParse(t, `{"run":{"groups":["admins","dev"]}}`)
	assert.Empty(t, diags)
	assert.Equal(t, []string{"admins", "dev"}, req.Run.Groups, "groups in request order")
	req, _ = mustParse(t, `{"run":{"groups":null}}`)
	assert.Empty(t, req.Run.Groups, "null is no group")

	for body, field := range map[string]string{
		`{"run":{"groups":"admins"}}`:            "run.groups",
		`{"run":{"groups":{"admins":true}}}`:     "run.groups",
		`{"run":{"groups":["admins",1]}}`:        "run.groups[1]",
		`{"run":{"groups":["admins",null]}}`:     "run.groups[1]",
		`{"run":{"groups":[""]}}`:                "run.groups[0]",
		`{"run":{"groups":["admins","admins"]}}`: "run.groups[1]",
		`{"run":{"Groups":["admins"]}}`:          "run.Groups",
	} {
		_, _, err := spec.Parse([]byte(body))
		var re *spec.RejectError
		require.True(t, errors.As(err, &re), "Parse(%s) error = %v, want a refusal", body, err)
		assert.Equal(t, field, re.Field, "Parse(%s) refusal field", body)
		if field != "run.Groups" {
			assert.Equal(t, spec.CodeInvalidGroups, re.Code, "Parse(%s) refusal code", body)
		}
	}
}
