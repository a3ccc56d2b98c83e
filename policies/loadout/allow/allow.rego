# METADATA
# title: Allowlist rules
# description: |
#   Server ids (base pattern, R2, reserved names), transports, commands (R12), credentials and
#   shared servers' users allowlist (fail closed without run.user), which of a server's own env
#   keys are refused (R4), header syntax (R5), tool names (R3), and which host environment
#   variables reach a stdio server. Go turns the tunables of data.tunables.allow (reserved ids,
#   refused env keys, the tool-name pattern, denied skill names) into facts; this package
#   decides what each fact means.
#
#   Rules work on sets (host/policy/doc.go): a server fact is the set of server indices it
#   holds for, an entry fact the set of [server index, key] pairs it holds for. A rule's result
#   is such a set, so a request costs the same few rule evaluations whatever its size.
package loadout.allow

import data.tunables.allow as conf

credential_modes := {"", "user", "shared"}

# verdict is the allowlist rules' part of the decision (host/policy/doc.go), in one rule
# (each rule evaluated costs):
#   servers: each deny code with the set of server indices that break it: the server flags
#     (host/policy facts), then the credential rules over the servers with credentials or
#     users set (facts.credentialed);
#   skills: each deny code with the set of skill indices that break it;
#   drop: why entries are removed, per field, as [code, entries] in priority order (an entry
#     in several sets is removed once, for the first): env R4, headers R5, allowedTools R3;
#   warnings: restricted servers (allowedTools declared, R10) left with no valid tool keep none
#     (server: its index);
#   spawnEnv: what of the host environment reaches a stdio server (exact keys, prefixes).
verdict := {
	"servers": {
		"id_invalid": flags.idInvalid,
		"id_double_underscore": flags.idDoubleUnderscore,
		"id_trailing_underscore": flags.idTrailingUnderscore,
		"id_reserved": flags.idReserved,
		"transport_invalid": flags.transportInvalid,
		"command_invalid": flags.commandInvalid,
		"credentials_invalid": {i |
			some i in creds
			not credential_modes[srvs[i].credentials]
		},
		"shared_authority_invalid": {i |
			some i in creds
			srvs[i].credentials == "shared"
			not input.facts.sharedAuthorityOK[i]
		},
		"users_not_shared": {i |
			some i in creds
			srvs[i].hasUsers
			srvs[i].credentials != "shared"
		},
		"user_missing": {i |
			some i in creds
			srvs[i].credentials == "shared"
			srvs[i].hasUsers
			not input.request.run.hasUser
		},
		"user_not_allowed": {i |
			some i in creds
			srvs[i].credentials == "shared"
			srvs[i].hasUsers
			input.request.run.hasUser
			not input.request.run.user in srvs[i].users
		},
	},
	"skills": {"skill_name_denied": input.facts.skills.nameDenied},
	"drop": {
		"env": [
			["env_key_invalid", input.facts.env.keyInvalid],
			["env_value_invalid", input.facts.env.valueInvalid],
			["env_key_refused", input.facts.env.keyRefused],
		],
		"headers": [
			["header_name_invalid", input.facts.headers.nameInvalid],
			["header_value_invalid", input.facts.headers.valueInvalid],
		],
		"allowedTools": [["tool_name_invalid", tools.nameInvalid]],
	},
	"warnings": [{
		"code": "tools_none_left",
		"server": i,
		"message": "allowedTools is declared but no valid tool name is left: the server keeps no tool",
	} |
		some i in (input.facts.restricted - {t[0] | some t in (tools.all - tools.nameInvalid)})
	],
	"spawnEnv": conf.host_env,
} if {
	flags := input.facts.flags
	creds := input.facts.credentialed
	srvs := input.request.mcpServers
	tools := input.facts.tools
}
