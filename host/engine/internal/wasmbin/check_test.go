package wasmbin

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/host/engine"
)

// TestCheckRefuses lists what Check must refuse before a runtime's decoder sees it; the
// vector-count cases are the decoder bombs that made wazero allocate gigabytes.
func TestCheckRefuses(t *testing.T) {
	head := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	cases := []struct {
		name string
		body []byte
		is   error
	}{
		{"no magic", []byte("not wasm"), ErrMalformed},
		{"version 2", []byte{0, 'a', 's', 'm', 2, 0, 0, 0}, ErrMalformed},
		{"section past the end", append(bytes.Clone(head), 1, 10, 0), ErrMalformed},
		{"unknown section", append(bytes.Clone(head), 14, 0), ErrMalformed},
		{"sections out of order", append(bytes.Clone(head), 3, 1, 0, 1, 1, 0), ErrMalformed},
		{"repeated section", append(bytes.Clone(head), 1, 1, 0, 1, 1, 0), ErrMalformed},
		{"trailing bytes in a section", append(bytes.Clone(head), 5, 2, 0, 0), ErrMalformed},
		{"huge vector count", append(bytes.Clone(head), 6, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed},
		{"two memories", append(bytes.Clone(head), 5, 5, 2, 0, 1, 0, 1), engine.ErrABI},
		{"shared memory", append(bytes.Clone(head), 5, 4, 1, 3, 1, 1), engine.ErrABI},
		{"max below min", append(bytes.Clone(head), 5, 4, 1, 1, 2, 1), ErrMalformed},
		{"imported memory", append(bytes.Clone(head), 2, 8, 1, 1, 'e', 1, 'm', 2, 0, 1), engine.ErrLink},
		{"imported table", append(bytes.Clone(head), 2, 8, 1, 1, 'e', 1, 't', 1, 0x70, 0), engine.ErrLink},
		{"global of unknown type", append(bytes.Clone(head), 6, 5, 1, 0x40, 0, 0x41, 0), ErrMalformed},
		{"non-constant initializer", append(bytes.Clone(head), 6, 6, 1, 0x7f, 0, 0x20, 0, 0x0b), ErrMalformed},
		{"unterminated initializer", append(bytes.Clone(head), 6, 5, 1, 0x7f, 0, 0x41, 1), ErrMalformed},
		{"duplicate export", append(bytes.Clone(head), 7, 9, 2, 1, 'a', 0, 0, 1, 'a', 0, 0), ErrMalformed},
		{"export name not UTF-8", append(bytes.Clone(head), 7, 5, 1, 1, 0xff, 0, 0), ErrMalformed},
		{"data segment flags 3", append(bytes.Clone(head), 11, 3, 1, 3, 0), ErrMalformed},
		{"2^32-1 globals", append(bytes.Clone(head), 6, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed},
		{"function type with 2^31 parameters", append(bytes.Clone(head), 1, 8, 1, 0x60, 0x80, 0x80, 0x80, 0x80, 0x08, 0), ErrMalformed},
		{"non-function type", append(bytes.Clone(head), 1, 4, 1, 0x5f, 0, 0), ErrMalformed},
		{"function with 2^32-1 locals", append(bytes.Clone(head), 10, 10, 1, 8, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b), ErrMalformed},
		{"locals summing past the cap", append(bytes.Clone(head), 10, 12, 1, 10, 2, 0xb0, 0xea, 0x01, 0x7f, 0xb0, 0xea, 0x01, 0x7f, 0x0b), ErrMalformed},
		{"element vector of 2^32-1 functions", append(bytes.Clone(head), 9, 10, 1, 0, 0x41, 0, 0x0b, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed},
		{"table of a non-reference type", append(bytes.Clone(head), 4, 4, 1, 0x7f, 0, 1), ErrMalformed},
		{"name map of 2^32-1 entries", append(bytes.Clone(head), 0, 11, 4, 'n', 'a', 'm', 'e', 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed},
		{"local names of 2^32-1 functions", append(bytes.Clone(head), 0, 11, 4, 'n', 'a', 'm', 'e', 2, 5, 0xff, 0xff, 0xff, 0xff, 0x0f), ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.body)
			require.Error(t, err, "Check(% x)", tc.body)
			assert.True(t, errors.Is(err, tc.is), "Check(% x) error %v, want %v", tc.body, err, tc.is)
		})
	}
}

// TestCheckAccepts checks a small valid module with every section Check walks.
func TestCheckAccepts(t *testing.T) {
	mod := []byte{0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1, 6, 6, 1, 0x7f, 1, 0x41, 5, 0x0b,
		7, 5, 1, 1, 'f', 0, 0, 10, 4, 1, 2, 0, 0x0b, 11, 7, 1, 0, 0x41, 8, 0x0b, 1, 'x', 0, 3, 1, 'c', 'x'}
	require.NoError(t, Check(mod), "Check(% x)", mod)
}

// FuzzCheck feeds hostile bytes to Check: it must never panic.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0})
	f.Add([]byte{0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1, 6, 6, 1, 0x7f, 1, 0x41, 5, 0x0b,
		7, 5, 1, 1, 'f', 0, 0, 10, 4, 1, 2, 0, 0x0b, 11, 7, 1, 0, 0x41, 8, 0x0b, 1, 'x', 0, 3, 1, 'c', 'x'})
	f.Fuzz(func(t *testing.T, b []byte) { _ = Check(b) })
}
