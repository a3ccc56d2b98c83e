package policy

import "github.com/loadout-dev/loadout/sdk/format"

// jsonSpelling is s as spelled inside a JSON string by the project's encoders
// (conformity/testdata/README.md §4): `"` `\` escaped, \b \f \n \r \t, other controls below U+0020 as
// \u00xx, < > & U+2028 U+2029 as \u003c \u003e \u0026 \u2028 \u2029, the rest literal.
// It is sdk/format's spelling, the one plugins encode with and the host substitutes with.
func jsonSpelling(s string) string { return format.JSONStringBody(s) }

// tomlSpelling is s as spelled inside a TOML basic string: `"` `\` escaped, \b \t \n \f \r,
// other controls below U+0020 and DEL as \u00xx, the rest literal (sdk/format's spelling).
func tomlSpelling(s string) string { return format.TOMLStringBody(s) }
