# METADATA
# title: URL rules
# description: |
#   Which remote server URLs an http server may use. The base rule: https anywhere, plain http
#   only to a loopback host; R1: no userinfo (even an empty '@'), no '\', no byte <= 0x20 or
#   >= 0x7f, a standard URL parser must read the same host as the base rule, port digits in
#   1-65535, a non-empty host, loopback IPv4 only as a canonical dotted quad.
#   Go computes the facts (input.facts.servers[i].flags and .url), including whether the scheme
#   is in data.tunables.url.schemes_anywhere / schemes_loopback; this package only decides.
package loadout.url

# flag_codes maps a server flag (host/policy facts) to the URL rule code it breaks.
flag_codes := {
	"urlMissing": "url_missing",
	"urlBadBytes": "url_bad_bytes",
	"urlUserinfo": "url_userinfo",
	"urlHostsDisagree": "url_parse_mismatch",
	"urlBadPort": "url_bad_port",
	"urlEmptyHost": "url_empty_host",
}

# deny[i] is the set of URL rule codes server i breaks (absent: none).
deny[i] contains code if {
	some i, f in input.facts.servers
	some flag in f.flags
	code := flag_codes[flag]
}

deny[i] contains "url_not_allowed" if {
	some i in input.facts.http
	input.request.mcpServers[i].url != ""
	not target_allowed(input.facts.servers[i].url)
}

# target_allowed(u) holds when the scheme may reach the host: a scheme allowed anywhere, or a
# loopback-only scheme with a loopback host. The scheme is the base rule's (^(https?)://).
target_allowed(u) if {
	u.baseMatch
	u.schemeAnywhere
}

target_allowed(u) if {
	u.baseMatch
	u.schemeLoopback
	u.loopback
}
