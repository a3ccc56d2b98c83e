package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/redact"
)

// TestErrorTextMasksRequestSecrets: an error printed by the CLI masks its request's secrets
// with host/redact's model, and nothing else, also once classify has made it a usage error.
func TestErrorTextMasksRequestSecrets(t *testing.T) {
	cause := &host.RequestError{
		Err:     &host.UsageError{Msg: "roots: key Bearer abcdefgh1234 (abcdefgh1234) for X-Client loadout"},
		Secrets: redact.Spellings("Bearer abcdefgh1234"),
	}
	err := fmt.Errorf("render: %w", cause)
	const want = "render: roots: key [REDACTED] ([REDACTED]) for X-Client loadout"
	assert.Equal(t, want, errorText(err), "errorText")
	var ue *usageError
	if assert.True(t, errors.As(classify(err), &ue), "classify(usage error) is a usage error") {
		assert.Equal(t, want, ue.msg, "the usage error's message")
	}
	assert.Equal(t, "plain Bearer abcdefgh1234", errorText(errors.New("plain Bearer abcdefgh1234")),
		"an error that carries no request is printed as it is")
}
