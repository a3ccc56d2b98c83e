# METADATA
# title: Secret rules
# description: |
#   Which values are secrets (each key of secretKeys names env[key] and headers[key], both, R6;
#   header names in always_secret_headers; the run's stored token), and which configured entries
#   a per-user server (credentials: user) or a server with a stored token may not keep.
#   Go turns the tunables of data.tunables.secrets into entry facts (alwaysSecret,
#   userCredential); this package decides what each fact means.
package loadout.secrets

# Where the run's stored token goes, per transport.
token_keys := {"stdio": "MCP_ACCESS_TOKEN", "http": "Authorization"}

# env_reason(srv, e) is why env entry e (facts) of server srv is removed; undefined if kept.
env_reason(srv, e) := "credentials_user" if {
	srv.credentials == "user"
	e.userCredential
}

# header_reason(srv, f, h) is why header h (facts) of server srv (facts f) is removed: a
# per-user server's credential header, or the Authorization header of an http server whose
# stored token supplies it; undefined if kept.
header_reason(srv, f, h) := "credentials_user" if {
	srv.credentials == "user"
	h.userCredential
} else := "replaced_by_token" if {
	f.token
	srv.transport == "http"
	h.tokenHeader
}

# server_secrets(i, srv, f, drops) lists the secret entries of server i that survive its
# drops: env and header values named by secretKeys (both fields) or by always_secret_headers,
# when non-empty, then the stored token.
server_secrets(i, srv, f, drops) := array.concat(array.concat(env, headers), token) if {
	env := [{"server": i, "field": "env", "key": e.key} |
		some e in f.env
		e.secretNamed
		not e.valueEmpty
		not dropped(drops, "env", e.key)
	]
	headers := [{"server": i, "field": "headers", "key": h.key} |
		some h in f.headers
		secret_header(h)
		not h.valueEmpty
		not dropped(drops, "headers", h.key)
	]
	token := [{"server": i, "field": "token", "key": token_keys[srv.transport]} | f.token]
}

secret_header(h) if h.secretNamed

secret_header(h) if h.alwaysSecret

# dropped(drops, field, key) holds when one of drops removes key from field.
dropped(drops, field, key) if {
	some d in drops
	d.key == key
	d.field == field
}
