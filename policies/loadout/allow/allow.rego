# METADATA
# title: Allowlist rules
# description: |
#   Server ids (base pattern, R2, reserved names), transports, commands (R12), credentials and
#   shared servers' users allowlist (fail closed without run.user), which of a server's own env
#   keys are refused (R4), header syntax (R5), tool names (R3), and which host environment
#   variables reach a stdio server. Tunables are in data.tunables.allow.
package loadout.allow

import data.tunables.allow as conf

credential_modes := {"", "user", "shared"}

reserved_ids := {id | some id in conf.ids.reserved}

refused_keys := {k | some k in conf.env_refused.keys}

refused_prefixes := {p | some p in conf.env_refused.prefixes}

refused_suffixes := {s | some s in conf.env_refused.suffixes}

denied_skill_names := {lower(n) | some n in conf.skills.denied_names}

# spawn_env is what of the host environment reaches a stdio server: exact keys and prefixes.
spawn_env := {"keys": conf.host_env.keys, "prefixes": conf.host_env.prefixes}

# flag_codes maps a server flag (host/policy facts) to the allowlist rule code it breaks.
flag_codes := {
	"idInvalid": "id_invalid",
	"idDoubleUnderscore": "id_double_underscore",
	"idTrailingUnderscore": "id_trailing_underscore",
	"transportInvalid": "transport_invalid",
	"commandInvalid": "command_invalid",
}

# deny[i] is the set of allowlist rule codes server i breaks (absent: none).
deny[i] contains code if {
	some i, f in input.facts.servers
	some flag in f.flags
	code := flag_codes[flag]
}

deny[i] contains "id_reserved" if {
	some i, srv in input.request.mcpServers
	reserved_ids[srv.id]
}

deny[i] contains "id_reserved" if {
	some i, srv in input.request.mcpServers
	some prefix in conf.ids.reserved_prefixes
	startswith(srv.id, prefix)
}

# Credential rules only visit the servers with credentials or users (facts.credentialed).
deny[i] contains "credentials_invalid" if {
	some i in input.facts.credentialed
	srv := input.request.mcpServers[i]
	not credential_modes[srv.credentials]
}

deny[i] contains "shared_authority_invalid" if {
	some i in input.facts.credentialed
	srv := input.request.mcpServers[i]
	srv.credentials == "shared"
	not input.facts.servers[i].sharedAuthorityOK
}

deny[i] contains "users_not_shared" if {
	some i in input.facts.credentialed
	srv := input.request.mcpServers[i]
	srv.hasUsers
	srv.credentials != "shared"
}

deny[i] contains "user_missing" if {
	some i in input.facts.credentialed
	srv := input.request.mcpServers[i]
	srv.credentials == "shared"
	srv.hasUsers
	not input.request.run.hasUser
}

deny[i] contains "user_not_allowed" if {
	some i in input.facts.credentialed
	srv := input.request.mcpServers[i]
	srv.credentials == "shared"
	srv.hasUsers
	input.request.run.hasUser
	not input.request.run.user in srv.users
}

# skill_deny[k] is the set of rule codes skill k breaks (absent: none).
skill_deny[k] contains "skill_name_denied" if {
	some k, skill in input.request.skills
	denied_skill_names[lower(skill.name)]
}

# env_reason(e) is why a server env entry with facts e is removed; undefined when it is kept.
env_reason(e) := "env_key_invalid" if {
	e.keyInvalid
} else := "env_value_invalid" if {
	e.valueInvalid
} else := "env_key_refused" if {
	refused_env(e)
}

# refused_env(e) holds when the uppercased key is refused, or starts or ends with a refused
# prefix or suffix. e.prefixes / e.suffixes are the key's parts up to / from each '_'.
refused_env(e) if refused_keys[e.upper]

refused_env(e) if {
	some p in e.prefixes
	refused_prefixes[p]
}

refused_env(e) if {
	some s in e.suffixes
	refused_suffixes[s]
}

# header_reason(h) is why a configured header with facts h is removed (R5).
header_reason(h) := "header_name_invalid" if {
	h.nameInvalid
} else := "header_value_invalid" if {
	h.valueInvalid
}

# tool_reason(t) is why an allowedTools entry is removed (R3).
tool_reason(t) := "tool_name_invalid" if {
	not regex.match(conf.tools.pattern, t)
}
