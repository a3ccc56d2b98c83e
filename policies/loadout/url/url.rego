# METADATA
# title: URL rules
# description: |
#   Which URL an http server may use (docs/SECURITY.md §1 and R1): https to any host, plain
#   http only to a loopback host, and no URL whose parts two parsers read differently. The
#   same rules judge the server's OAuth authorization-server metadata URL. Go parses
#   input.servers[i].url into input.servers[i].facts.url and the metadata URL into
#   facts.oauthMetadataUrl (docs/POLICIES.md); the schemes are data.tunables.url.
package loadout.url

import data.tunables.url as conf

# http is the http servers by their index in input.servers.
http[i] := s if {
	some i, s in input.servers
	s.transport == "http"
}

# checked are the URLs the rules below judge: every http server's url, and its OAuth
# authorization-server metadata URL when it sets one. The harness fetches that document to
# learn where to send the user and the client id, so it gets the server url's rules.
checked contains {"server": i, "field": "url", "url": s.url, "facts": s.facts.url} if {
	some i, s in http
}

checked contains {
	"server": i, "field": "oauth.authServerMetadataUrl",
	"url": s.oauth.authServerMetadataUrl, "facts": s.facts.oauthMetadataUrl,
} if {
	some i, s in http
	s.oauth.authServerMetadataUrl != ""
}

deny contains {"server": i, "field": "url", "code": "url_missing", "msg": "an http server needs a url"} if {
	some i, s in http
	s.url == ""
}

deny contains {
	"server": c.server, "field": c.field, "code": "url_bad_bytes",
	"msg": "the url holds a space, a control or non-ASCII byte, or a backslash",
} if {
	some c in checked
	c.facts.badBytes
}

deny contains {"server": c.server, "field": c.field, "code": "url_userinfo", "msg": "the url holds userinfo (an '@' in the authority)"} if {
	some c in checked
	c.facts.userinfo
}

deny contains {
	"server": c.server, "field": c.field, "code": "url_parse_mismatch",
	"msg": "a standard URL parser reads another scheme, host or port than the base rule",
} if {
	some c in checked
	c.url != ""
	not c.facts.parsersAgree
}

deny contains {"server": c.server, "field": c.field, "code": "url_bad_port", "msg": "the url's port is not 1-65535 in digits"} if {
	some c in checked
	c.facts.badPort
}

deny contains {"server": c.server, "field": c.field, "code": "url_empty_host", "msg": "the url has no host"} if {
	some c in checked
	c.url != ""
	c.facts.host == ""
}

deny contains {
	"server": c.server, "field": c.field, "code": "url_not_allowed",
	"msg": sprintf("scheme %q may not reach host %q: https anywhere, plain http only to loopback", [c.facts.scheme, c.facts.host]),
} if {
	some c in checked
	c.url != ""
	not allowed(c.facts)
}

# allowed(u) holds when the scheme of URL facts u may reach its host. The scheme is the base
# rule's, ^(https?)://, so a URL the base rule does not read is never allowed.
allowed(u) if {
	u.baseMatch
	u.scheme in conf.schemes_anywhere
}

allowed(u) if {
	u.baseMatch
	u.scheme in conf.schemes_loopback
	u.loopback
}

# In a container run the host's loopback is host.docker.internal (loadout rewrites loopback
# URLs to it), so that name counts as loopback there and only there.
allowed(u) if {
	input.run.container
	u.baseMatch
	u.scheme in conf.schemes_loopback
	u.dockerHost
}
