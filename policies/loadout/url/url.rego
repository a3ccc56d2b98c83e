# METADATA
# title: URL rules
# description: |
#   Which remote server URLs an http server may use. The base rule: https anywhere, plain http
#   only to a loopback host; R1: no userinfo (even an empty '@'), no '\', no byte <= 0x20 or
#   >= 0x7f, a standard URL parser must read the same host as the base rule, port digits in
#   1-65535, a non-empty host, loopback IPv4 only as a canonical dotted quad.
#   Go computes the facts (input.facts.servers[i].url); this package only decides.
package loadout.url

import data.tunables.url as conf

# Schemes allowed to any host, and schemes allowed only to a loopback host (lowercased).
anywhere := {s | some s in conf.schemes_anywhere}

loopback_only := {s | some s in conf.schemes_loopback}

# http[i] is the URL facts of request server i when it uses the http transport.
http[i] := f.url if {
	some i, srv in input.request.mcpServers
	srv.transport == "http"
	f := input.facts.servers[i]
}

# deny[i] is the set of URL rule codes server i breaks (absent: none).
deny[i] contains "url_missing" if {
	some i, u in http
	not u.present
}

deny[i] contains "url_bad_bytes" if {
	some i, u in http
	u.badBytes
}

deny[i] contains "url_userinfo" if {
	some i, u in http
	u.userinfo
}

deny[i] contains "url_parse_mismatch" if {
	some i, u in http
	u.present
	u.hostsDisagree
}

deny[i] contains "url_bad_port" if {
	some i, u in http
	u.badPort
}

deny[i] contains "url_empty_host" if {
	some i, u in http
	u.present
	u.hostEmpty
}

deny[i] contains "url_not_allowed" if {
	some i, u in http
	u.present
	not target_allowed(u)
}

# target_allowed(u) holds when the scheme may reach the host: a scheme allowed anywhere, or a
# loopback-only scheme with a loopback host. The scheme is the base rule's (^(https?)://).
target_allowed(u) if {
	u.baseMatch
	anywhere[u.scheme]
}

target_allowed(u) if {
	u.baseMatch
	loopback_only[u.scheme]
	u.loopback
}
