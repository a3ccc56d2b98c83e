# METADATA
# title: Allowlist rules
# description: |
#   Server ids (docs/SECURITY.md §1 and R2, reserved names), transports, commands (R12),
#   credentials and the users allowlist of shared servers (fail closed without run.user), a
#   server's own env keys (R4), header syntax (R5), tool names (R3), denied skill names, and
#   which host environment variables reach a stdio server. The lists and patterns are
#   data.tunables.allow.
package loadout.allow

import data.tunables.allow as conf

deny contains {"server": i, "field": "id", "code": "id_invalid", "msg": "the id does not match ^[a-z0-9][a-z0-9_-]{0,63}$"} if {
	some i, s in input.servers
	not regex.match(`^[a-z0-9][a-z0-9_-]{0,63}$`, s.id)
}

deny contains {"server": i, "field": "id", "code": "id_double_underscore", "msg": "the id holds '__'"} if {
	some i, s in input.servers
	contains(s.id, "__")
}

deny contains {"server": i, "field": "id", "code": "id_trailing_underscore", "msg": "the id ends with '_'"} if {
	some i, s in input.servers
	endswith(s.id, "_")
}

deny contains {"server": i, "field": "id", "code": "id_reserved", "msg": sprintf("the id %q is reserved", [s.id])} if {
	some i, s in input.servers
	reserved_id(s)
}

reserved_id(s) if s.id in conf.ids.reserved

reserved_id(s) if {
	some prefix in conf.ids.reserved_prefixes
	startswith(s.id, prefix)
	not user_id_prefix(s, prefix)
}

# user_id_prefix holds for the prefix every user server's id starts with (host/spec gives it):
# reserved for user servers, so no reason to refuse one.
user_id_prefix(s, prefix) if {
	s.source == "user"
	prefix == "u_"
}

deny contains {"server": i, "field": "transport", "code": "transport_invalid", "msg": "the transport is neither stdio nor http"} if {
	some i, s in input.servers
	not s.transport in {"stdio", "http"}
}

deny contains {
	"server": i, "field": "command", "code": "command_invalid",
	"msg": "the command is blank, has surrounding whitespace, NUL, CR or LF, or starts with '-'",
} if {
	some i, s in input.servers
	s.transport == "stdio"
	invalid_command(s.command)
}

invalid_command(c) if trim_space(c) == ""

invalid_command(c) if trim_space(c) != c

invalid_command(c) if regex.match(`[\x00\r\n]`, c)

invalid_command(c) if startswith(c, "-")

deny contains {
	"server": i, "field": "credentials", "code": "credentials_invalid",
	"msg": sprintf("credentials %q is none of %v", [s.credentials, conf.credentials.modes]),
} if {
	some i, s in input.servers
	s.credentials != ""
	not s.credentials in conf.credentials.modes
}

deny contains {
	"server": i, "field": "sharedAuthority", "code": "shared_authority_invalid",
	"msg": "a shared server needs a non-empty one-line sharedAuthority, without control characters",
} if {
	some i, s in input.servers
	s.credentials == "shared"
	not one_line(s.sharedAuthority)
}

# one_line holds for text that is not blank and has no control character and no line or
# paragraph separator: the prompt and the shared_credential warning quote it as it is.
one_line(text) if {
	trim_space(text) != ""
	not regex.match(`[\p{Cc}\x{2028}\x{2029}]`, text)
}

deny contains {"server": i, "field": "users", "code": "users_not_shared", "msg": "users is only valid on a shared server"} if {
	some i, s in input.servers
	s.hasUsers
	s.credentials != "shared"
}

deny contains {
	"server": i, "field": "users", "code": "user_missing",
	"msg": "the server restricts its users and the run has no user",
} if {
	some i, s in input.servers
	s.credentials == "shared"
	s.hasUsers
	not input.run.hasUser
}

deny contains {"server": i, "field": "users", "code": "user_not_allowed", "msg": sprintf("user %q is not in the server's users", [input.run.user])} if {
	some i, s in input.servers
	s.credentials == "shared"
	s.hasUsers
	input.run.hasUser
	not input.run.user in s.users
}

deny contains {"skill": k, "code": "skill_name_denied", "msg": sprintf("the skill name %q is denied", [sk.name])} if {
	some k, sk in input.skills
	lower(sk.name) in {lower(n) | some n in conf.skills.denied_names}
}

drop contains {
	"server": i, "field": "env", "key": key, "code": "env_key_invalid",
	"msg": "the key does not match ^[A-Za-z_][A-Za-z0-9_]{0,127}$",
} if {
	some i, s in input.servers
	some key, _ in s.env
	not regex.match(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`, key)
}

drop contains {"server": i, "field": "env", "key": key, "code": "env_value_invalid", "msg": "the value holds a NUL"} if {
	some i, s in input.servers
	some key, value in s.env
	contains(value, "\u0000")
}

drop contains {"server": i, "field": "env", "key": key, "code": "env_key_refused", "msg": "the key can inject code or redirect trust"} if {
	some i, s in input.servers
	some key, _ in s.env
	refused_env_key(upper(key))
}

# refused_env_key(k) holds for an uppercased key k that R4 refuses: listed, or with a
# listed prefix, or ending in a listed suffix anywhere (PROXY refuses GOPROXY and HTTPS_PROXY).
refused_env_key(k) if k in conf.env_refused.keys

refused_env_key(k) if strings.any_prefix_match(k, conf.env_refused.prefixes)

refused_env_key(k) if strings.any_suffix_match(k, conf.env_refused.suffixes)

drop contains {"server": i, "field": "headers", "key": name, "code": "header_name_invalid", "msg": "the name is not an RFC 9110 token"} if {
	some i, s in input.servers
	some name, _ in s.headers
	not regex.match("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", name)
}

drop contains {"server": i, "field": "headers", "key": name, "code": "header_value_invalid", "msg": "the value holds CR, LF or NUL"} if {
	some i, s in input.servers
	some name, value in s.headers
	regex.match(`[\r\n\x00]`, value)
}

drop contains {
	"server": i, "field": "allowedTools", "key": tool, "code": "tool_name_invalid",
	"msg": sprintf("the tool name does not match %s", [conf.tools.pattern]),
} if {
	some i, s in input.servers
	some tool in s.allowedTools
	not regex.match(conf.tools.pattern, tool)
}

# A restricted server (allowedTools declared, R10) keeps no tool when none of its entries is
# valid: it is still rendered, with every tool refused, and the run is told.
warn contains {
	"server": i, "code": "tools_none_left",
	"msg": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
} if {
	some i, s in input.servers
	s.toolsDeclared
	every tool in s.allowedTools {
		not regex.match(conf.tools.pattern, tool)
	}
}

# spawn_env names the host variables a stdio server inherits: exact keys and prefixes, both
# case-sensitive.
spawn_env := {"keys": conf.host_env.keys, "prefixes": conf.host_env.prefixes}
