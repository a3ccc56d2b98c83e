package plan_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func TestDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	want := claudePlan()
	want.Warnings = []abi.Warning{{Code: "server_disabled", Message: "m", Server: "gamma"}}
	data, err := json.Marshal(want)
	require.NoError(t, err, "json.Marshal(plan)")
	got, err := plan.Decode(data)
	require.NoError(t, err, "Decode(marshalled claude plan)")
	assert.Equal(t, want, got, "Decode(json.Marshal(p)) differs from p")
}

func TestDecodeNullArraysAreEmpty(t *testing.T) {
	t.Parallel()
	got, err := plan.Decode([]byte(`{"files":null,"args":null,"env":null,"prompt":"","gitExclude":null,"warnings":null}`))
	require.NoError(t, err, "Decode(plan with null arrays)")
	assert.Equal(t, &abi.Plan{Files: []abi.File{}, Args: []string{}, Env: []abi.Pair{}, GitExclude: []string{}, Warnings: []abi.Warning{}}, got,
		"Decode(plan with null arrays) should give empty, non-nil slices")
}

func TestDecodePluginError(t *testing.T) {
	t.Parallel()
	_, err := plan.Decode([]byte(`{"error":{"code":"unsupported","message":"no sse"}}`))
	var pe *plan.PluginError
	require.True(t, errors.As(err, &pe), "Decode(error document) = %v, want *PluginError", err)
	assert.Equal(t, plan.PluginError{Code: "unsupported", Message: "no sse"}, *pe, "Decode(error document)")
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		syntax   bool   // want *SyntaxError, else *DecodeError
		wantPath string // JSON path the error names
	}{
		{"invalid utf-8", "{\"prompt\":\"\xff\"}", true, ""},
		{"invalid json", `{"files":[}`, true, "files"},
		{"empty", ``, true, ""},
		{"trailing data", `{} {}`, true, ""},
		{"trailing garbage", `{}x`, true, ""},
		{"duplicate top-level", `{"args":[],"args":["--evil"]}`, true, ""},
		{"duplicate nested", `{"files":[{"path":"a","path":"b"}]}`, true, "files[0]"},
		{"duplicate after unescaping", `{"prompt":"a","pr\u006fmpt":"b"}`, true, ""},
		{"too deep", `{"files":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, true, "files" + strings.Repeat("[0]", 63)},
		{"unknown field", `{"files":[],"hooks":{}}`, false, "hooks"},
		{"case-folded field", `{"Files":[]}`, false, "Files"},
		{"unicode-folded field", `{"argſ":[]}`, false, `["argſ"]`},
		{"unknown nested field", `{"files":[{"root":"run","owner":"root"}]}`, false, "files[0].owner"},
		{"wrong type", `{"args":"--evil"}`, false, "args"},
		{"wrong item type", `{"args":[1]}`, false, "args[0]"},
		{"wrong bool", `{"files":[{"secret":"yes"}]}`, false, "files[0].secret"},
		{"not an object", `[]`, false, ""},
		{"error with extras", `{"error":{"code":"x","message":"m"},"files":[]}`, false, ""},
		{"error without code", `{"error":{"message":"m"}}`, false, "error.code"},
		{"error unknown member", `{"error":{"code":"x","stack":"s"}}`, false, "error.stack"},
		{"error wrong type", `{"error":"boom"}`, false, "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := plan.Decode([]byte(tc.in))
			require.Error(t, err, "Decode(%q) = %+v, nil; want an error", tc.in, p)
			if tc.syntax {
				var se *plan.SyntaxError
				require.True(t, errors.As(err, &se), "Decode(%q) = %v, want a *SyntaxError", tc.in, err)
				assert.Equal(t, tc.wantPath, se.Path, "Decode(%q) SyntaxError.Path", tc.in)
				return
			}
			var de *plan.DecodeError
			require.True(t, errors.As(err, &de), "Decode(%q) = %v, want a *DecodeError", tc.in, err)
			assert.Equal(t, tc.wantPath, de.Path, "Decode(%q) DecodeError.Path", tc.in)
		})
	}
}
