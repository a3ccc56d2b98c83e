package policy

import "strings"

// Reason codes of the default policies. A custom policy may add codes; they are reported as
// they are, with a generic message.
var reasonMessages = map[string]string{
	"url_missing":              "an http server needs a url",
	"url_bad_bytes":            "the url holds a space, a control or non-ASCII byte, or a backslash",
	"url_userinfo":             "the url holds userinfo (an '@' in the authority)",
	"url_parse_mismatch":       "a standard URL parser reads another host than the rule",
	"url_bad_port":             "the url's port is not 1-65535 in digits",
	"url_empty_host":           "the url has no host",
	"url_not_allowed":          "the url is not allowed: https anywhere, plain http only to loopback",
	"id_invalid":               "the id does not match ^[a-z0-9][a-z0-9_-]{0,63}$",
	"id_double_underscore":     "the id holds '__'",
	"id_trailing_underscore":   "the id ends with '_'",
	"id_reserved":              "the id is reserved",
	"transport_invalid":        "the transport is neither stdio nor http",
	"command_invalid":          "the command is blank, has surrounding whitespace, NUL, CR or LF, or starts with '-'",
	"credentials_invalid":      "credentials is neither user nor shared",
	"shared_authority_invalid": "a shared server needs a non-empty one-line sharedAuthority",
	"users_not_shared":         "users is only valid on a shared server",
	"user_missing":             "the server restricts its users and the run has no user",
	"user_not_allowed":         "the run's user is not in the server's users",
	"skill_name_denied":        "the skill name is denied",
	"env_key_invalid":          "the key does not match ^[A-Za-z_][A-Za-z0-9_]{0,127}$",
	"env_value_invalid":        "the value holds a NUL",
	"env_key_refused":          "the key can inject code or redirect trust",
	"header_name_invalid":      "the name is not an RFC 9110 token",
	"header_value_invalid":     "the value holds CR, LF or NUL",
	"tool_name_invalid":        "the tool name does not match the allowed pattern",
	"credentials_user":         "a per-user server gets this from the run's own token",
	"replaced_by_token":        "the run's stored token supplies it",
}

func reasonMessage(code string) string {
	if m, ok := reasonMessages[code]; ok {
		return m
	}
	return "denied by policy (" + code + ")"
}

// reasonField is the JSON path suffix of the field a server deny code is about.
func reasonField(code string) string {
	switch {
	case strings.HasPrefix(code, "url_"):
		return ".url"
	case strings.HasPrefix(code, "id_"):
		return ".id"
	case code == "transport_invalid":
		return ".transport"
	case code == "command_invalid":
		return ".command"
	case code == "credentials_invalid":
		return ".credentials"
	case code == "shared_authority_invalid":
		return ".sharedAuthority"
	case code == "users_not_shared", code == "user_missing", code == "user_not_allowed":
		return ".users"
	default:
		return ""
	}
}
