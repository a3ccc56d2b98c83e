package plan

import "github.com/loadout-dev/loadout/sdk/profile/readback"

// The strict JSON parser Decode reads a plan with, and whose *SyntaxError it returns; it lives
// with the config reader (sdk/profile/readback), which reads the plan's config files with it.
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
