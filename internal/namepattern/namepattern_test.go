package namepattern

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSameAsBoundedRepetition checks each pattern the host uses against the bounded regular
// expression it replaces, on names around each length limit.
func TestSameAsBoundedRepetition(t *testing.T) {
	cases := []struct {
		bounded string
		pattern Pattern
	}{
		{`^[a-z0-9][a-z0-9_-]{0,63}$`, MustCompile(`^[a-z0-9][a-z0-9_-]*$`, 64)},
		{`^[A-Za-z_][A-Za-z0-9_]{0,127}$`, MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`, 128)},
		{`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`, 64)},
		{`^\.[a-z0-9][a-z0-9_-]{0,63}$`, MustCompile(`^\.[a-z0-9][a-z0-9_-]*$`, 65)},
		{`^[A-Za-z0-9_.()*:-]{1,64}$`, MustCompile(`^[A-Za-z0-9_.()*:-]+$`, 64)},
		{`^[A-Za-z0-9_.-]{1,64}$`, MustCompile(`^[A-Za-z0-9_.-]+$`, 64)},
	}
	for _, tc := range cases {
		want := regexp.MustCompile(tc.bounded)
		var names []string
		for _, first := range []string{"", "a", "A", "_", ".", "0", "-", "é"} {
			for _, n := range []int{0, 1, 62, 63, 64, 65, 66, 127, 128, 129} {
				for _, fill := range []string{"a", "_", "-", ".", "Z", " "} {
					names = append(names, first+strings.Repeat(fill, n))
				}
			}
		}
		for _, name := range names {
			assert.Equal(t, want.MatchString(name), tc.pattern.MatchString(name), "%s vs %s on %q", tc.bounded, tc.pattern, name)
		}
	}
}

func TestString(t *testing.T) {
	assert.Equal(t, `^[a-z]+$ (at most 3 characters)`, fmt.Sprint(MustCompile(`^[a-z]+$`, 3)))
}
