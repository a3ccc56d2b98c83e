package plan

import "github.com/loadout-dev/loadout/sdk/profile/readback"

// The strict JSON parser the check reads plans and configs with (sdk/profile/readback), as
// host/plan's callers have known it.
type (
	Kind        = readback.Kind
	Value       = readback.Value
	Member      = readback.Member
	SyntaxError = readback.SyntaxError
	TOMLDoc     = readback.TOMLDoc
)

// The JSON value kinds.
const (
	Null   = readback.Null
	Bool   = readback.Bool
	Number = readback.Number
	String = readback.String
	Array  = readback.Array
	Object = readback.Object
)

// ParseJSON parses data as exactly one strict JSON value (readback.ParseJSON).
func ParseJSON(data []byte) (*Value, error) { return readback.ParseJSON(data) }

// ParseTOML parses a TOML document (readback.ParseTOML).
func ParseTOML(s string) (*TOMLDoc, error) { return readback.ParseTOML(s) }
