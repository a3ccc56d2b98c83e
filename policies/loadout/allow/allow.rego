# METADATA
# title: Allowlist rules
# description: |
#   Server ids (base pattern, R2, reserved names), transports, commands (R12), credentials and
#   shared servers' users allowlist (fail closed without run.user), which of a server's own env
#   keys are refused (R4), header syntax (R5), tool names (R3), and which host environment
#   variables reach a stdio server. Go turns the tunables of data.tunables.allow (reserved ids,
#   refused env keys, the tool-name pattern, denied skill names) into facts; this package
#   decides what each fact means.
package loadout.allow

import data.tunables.allow as conf

credential_modes := {"", "user", "shared"}

# spawn_env is what of the host environment reaches a stdio server: exact keys and prefixes.
spawn_env := {"keys": conf.host_env.keys, "prefixes": conf.host_env.prefixes}

# flag_codes maps a server flag (host/policy facts) to the allowlist rule code it breaks.
flag_codes := {
	"idInvalid": "id_invalid",
	"idDoubleUnderscore": "id_double_underscore",
	"idTrailingUnderscore": "id_trailing_underscore",
	"idReserved": "id_reserved",
	"transportInvalid": "transport_invalid",
	"commandInvalid": "command_invalid",
}

# deny[i] is the set of allowlist rule codes server i breaks (absent: none).
deny[i] contains code if {
	some i, f in input.facts.servers
	some flag in f.flags
	code := flag_codes[flag]
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
	some k, f in input.facts.skills
	f.nameDenied
}

# env_reason(e) is why a server env entry with facts e is removed; undefined when it is kept.
env_reason(e) := "env_key_invalid" if {
	e.keyInvalid
} else := "env_value_invalid" if {
	e.valueInvalid
} else := "env_key_refused" if {
	e.keyRefused
}

# header_reason(h) is why a configured header with facts h is removed (R5).
header_reason(h) := "header_name_invalid" if {
	h.nameInvalid
} else := "header_value_invalid" if {
	h.valueInvalid
}

# tool_reason(t) is why an allowedTools entry with facts t is removed (R3).
tool_reason(t) := "tool_name_invalid" if t.nameInvalid
