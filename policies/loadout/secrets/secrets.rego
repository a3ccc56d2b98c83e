# METADATA
# title: Secret rules
# description: |
#   Which values are secrets (each key of secretKeys names env[key] and headers[key], both, R6;
#   header names in always_secret_headers; the run's stored token), and which configured entries
#   a per-user server (credentials: user) or a server with a stored token may not keep.
#   Go turns the tunables of data.tunables.secrets into entry facts (alwaysSecret,
#   userCredential); this package decides what each fact means. Facts and results are sets
#   of server indices or of [server index, key] pairs, some facts grouped by a server setting
#   (host/policy/doc.go).
package loadout.secrets

# verdict is the secret rules' part of the decision (host/policy/doc.go), a list of statements
# in one rule (each expression evaluated costs):
#   secret: the entries whose values are secrets: env and header values named by secretKeys
#     (both fields) or by always_secret_headers, when non-empty; and every stored token (by
#     server index). An entry that a rule drops never reaches a plugin, secret or not.
#   drop: which entries a server may not keep, per field, in priority order (after the
#     allowlist's reasons): a per-user server's (credentials: user) credential env keys and
#     headers, which the run's own token supplies; then the Authorization header of an http
#     server whose stored token supplies it. The facts group these entries by their server's
#     credentials (userCredential) and by the transport of the servers with a stored token
#     (tokenHeader).
verdict := [
	"secret", "env", env.secretNamed - env.valueEmpty,
	"secret", "headers", (headers.secretNamed | headers.alwaysSecret) - headers.valueEmpty,
	"secret", "token", input.facts.token,
	"drop", "env", "credentials_user", env.userCredential.user,
	"drop", "headers", "credentials_user", headers.userCredential.user,
	"drop", "headers", "replaced_by_token", headers.tokenHeader.http,
] if {
	env := input.facts.env
	headers := input.facts.headers
}
