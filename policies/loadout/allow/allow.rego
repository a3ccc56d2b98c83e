# METADATA
# title: Allowlist rules
# description: |
#   Server ids (base pattern, R2, reserved names), transports, commands (R12), credentials and
#   shared servers' users allowlist (fail closed without run.user), which of a server's own env
#   keys are refused (R4), header syntax (R5), tool names (R3), and which host environment
#   variables reach a stdio server. Go turns the tunables of data.tunables.allow (reserved ids,
#   refused env keys, the tool-name pattern, credential modes, denied skill names) into facts;
#   this package decides what each fact means.
#
#   Rules work on sets (host/policy/doc.go): a server fact is the set of server indices it
#   holds for, an entry fact the set of [server index, key] pairs it holds for. A statement's
#   set is such a set, so a request costs the same few expressions whatever its size.
package loadout.allow

import data.tunables.allow as conf

# unlisted_user is the code that refuses a shared server with a users allowlist that does not
# list the run's user, by input.request.run.hasUser: without a run user the rule fails closed.
unlisted_user := {false: "user_missing", true: "user_not_allowed"}

# verdict is the allowlist rules' part of the decision (host/policy/doc.go), a list of
# statements in one rule (each expression evaluated costs):
#   server: each deny code with the set of server indices that break it: the server flags
#     (host/policy facts; credentialsUnknown: credentials neither "" nor one of
#     data.tunables.allow.credentials.modes), then the credential rules: a shared server
#     needs a valid sharedAuthority, only a shared server may list users, and a shared server
#     that lists users admits only a run user it lists;
#   skill: each deny code with the set of skill indices that break it;
#   drop: why entries are removed, per field, in priority order (an entry several drop
#     statements name is removed once, for the first): env R4, headers R5, allowedTools R3;
#   warn: restricted servers (allowedTools declared, R10) left with no valid tool keep none;
#   spawn_env: what of the host environment reaches a stdio server (exact keys, prefixes).
verdict := [
	"server", "id_invalid", flags.idInvalid,
	"server", "id_double_underscore", flags.idDoubleUnderscore,
	"server", "id_trailing_underscore", flags.idTrailingUnderscore,
	"server", "id_reserved", flags.idReserved,
	"server", "transport_invalid", flags.transportInvalid,
	"server", "command_invalid", flags.commandInvalid,
	"server", "credentials_invalid", flags.credentialsUnknown,
	"server", "shared_authority_invalid", shared - input.facts.sharedAuthorityOK,
	"server", "users_not_shared", input.facts.hasUsers - shared,
	"server", unlisted_user[input.request.run.hasUser], (shared & input.facts.hasUsers) - input.facts.userListed,
	"skill", "skill_name_denied", input.facts.skills.nameDenied,
	"drop", "env", "env_key_invalid", input.facts.env.keyInvalid,
	"drop", "env", "env_value_invalid", input.facts.env.valueInvalid,
	"drop", "env", "env_key_refused", input.facts.env.keyRefused,
	"drop", "headers", "header_name_invalid", input.facts.headers.nameInvalid,
	"drop", "headers", "header_value_invalid", input.facts.headers.valueInvalid,
	"drop", "allowedTools", "tool_name_invalid", tools.nameInvalid,
	"warn", "tools_none_left", no_tool_left, tools.noneValid,
	"spawn_env", conf.host_env.keys, conf.host_env.prefixes,
] if {
	flags := input.facts.flags
	shared := input.facts.credentials.shared
	tools := input.facts.tools
}

# no_tool_left is the message of the tools_none_left warning.
no_tool_left := "allowedTools is declared but no valid tool name is left: the server keeps no tool"
