# METADATA
# title: URL rules
# description: |
#   Which remote server URLs an http server may use. The base rule: https anywhere, plain http
#   only to a loopback host; R1: no userinfo (even an empty '@'), no '\', no byte <= 0x20 or
#   >= 0x7f, a standard URL parser must read the same host as the base rule, port digits in
#   1-65535, a non-empty host, loopback IPv4 only as a canonical dotted quad.
#   Go computes the facts (input.facts.flags and input.facts.url, sets of server indices),
#   including whether the scheme is in data.tunables.url.schemes_anywhere / schemes_loopback;
#   this package only decides.
package loadout.url

# verdict is the URL rules' part of the decision (host/policy/doc.go): one "server" statement
# per URL rule code, with the set of server indices (http servers) that break it.
# url_not_allowed: a present url whose scheme may not reach its host. A scheme allowed
# anywhere reaches any host, a loopback-only scheme only a loopback host; the scheme is the
# base rule's (^(https?)://, facts.url.baseMatch).
verdict := [
	"server", "url_missing", flags.urlMissing,
	"server", "url_bad_bytes", flags.urlBadBytes,
	"server", "url_userinfo", flags.urlUserinfo,
	"server", "url_parse_mismatch", flags.urlHostsDisagree,
	"server", "url_bad_port", flags.urlBadPort,
	"server", "url_empty_host", flags.urlEmptyHost,
	"server", "url_not_allowed", (input.facts.http - flags.urlMissing) - allowed,
] if {
	flags := input.facts.flags
	u := input.facts.url
	allowed := u.baseMatch & (u.schemeAnywhere | (u.schemeLoopback & u.loopback))
}
