package loadout.url_test

import data.fixtures.hostile
import data.loadout.url

# codes is each hostile fixture server's deny codes about its url, by id; oauth_codes those
# about its OAuth metadata URL.
codes[s.id] := {d.code | some d in denied; d.server == i; d.field == "url"} if some i, s in hostile.servers

oauth_codes[s.id] := {d.code | some d in denied; d.server == i; d.field == "oauth.authServerMetadataUrl"} if some i, s in hostile.servers

denied := d if {
	d := url.deny with input as hostile
}

want := {
	"https-remote": set(),
	"http-remote": {"url_not_allowed"},
	"http-loopback": set(),
	"http-localhost": set(),
	"http-ipv6-loopback": set(),
	"http-short-loopback": {"url_not_allowed"},
	"url-userinfo": {"url_userinfo"},
	"url-backslash": {"url_bad_bytes", "url_parse_mismatch", "url_userinfo"},
	"url-bad-port": {"url_bad_port"},
	"url-empty-host": {"url_empty_host"},
	"url-ftp": {"url_empty_host", "url_not_allowed", "url_parse_mismatch"},
	"url-unclosed-bracket": {"url_parse_mismatch"},
	"oauth-meta-https": set(),
	"oauth-meta-http-remote": set(),
	"env-rules": set(),
}

# The OAuth metadata URL obeys the url's rules; the server url of these servers is fine.
want_oauth := {
	"https-remote": set(),
	"oauth-meta-https": set(),
	"oauth-meta-http-remote": {"url_not_allowed"},
	"oauth-meta-loopback": set(),
	"oauth-meta-userinfo": {"url_userinfo"},
}

test_oauth_metadata_url_rules[id] if {
	some id, codes_wanted in want_oauth
	oauth_codes[id] == codes_wanted
}

test_url_rules[id] if {
	some id, codes_wanted in want
	codes[id] == codes_wanted
}

# The spec drops an http server without a url before the policy runs; the rule still stands
# on its own.
test_url_missing if {
	d := url.deny with input.servers as [object.union(hostile.servers[0], {"url": ""})]
	{x.code | some x in d} == {"url_missing"}
}

# The schemes are the security team's: allowing plain http anywhere lets http-remote through.
test_schemes_are_tunable if {
	d := url.deny with input as hostile with data.tunables.url.schemes_anywhere as ["https", "http"]
	every x in d {
		hostile.servers[x.server].id != "http-remote"
	}
}

test_rules_name_the_url_field if {
	every x in denied {
		x.field in {"url", "oauth.authServerMetadataUrl"}
	}
}

# A metadata URL is judged only where the server sets one.
test_oauth_field_only_with_oauth if {
	every x in denied {
		judged(x)
	}
}

judged(x) if x.field == "url"

judged(x) if hostile.servers[x.server].oauth.authServerMetadataUrl != ""

# In a container run, loopback metadata URLs are rewritten to host.docker.internal as the
# server url is, and allowed there only.
test_oauth_metadata_docker_host if {
	s := object.union(hostile.servers[0], {
		"oauth": {"clientId": "", "callbackPort": 0, "scopes": [], "authServerMetadataUrl": "http://host.docker.internal:9000/meta"},
		"facts": {"url": hostile.servers[0].facts.url, "oauthMetadataUrl": object.union(hostile.servers[0].facts.url, {"scheme": "http", "host": "host.docker.internal", "loopback": false, "dockerHost": true})},
	})
	inside := url.deny with input.servers as [s] with input.run.container as true
	outside := url.deny with input.servers as [s] with input.run.container as false
	inside == set()
	{[x.field, x.code] | some x in outside} == {["oauth.authServerMetadataUrl", "url_not_allowed"]}
}

# host.docker.internal is the host's loopback only when the harness runs in a container.
docker_server := object.union(hostile.servers[0], {
	"url": "http://host.docker.internal:8080/mcp",
	"facts": {"url": object.union(hostile.servers[0].facts.url, {"scheme": "http", "host": "host.docker.internal", "loopback": false, "dockerHost": true})},
})

test_docker_host_is_loopback_in_a_container if {
	d := url.deny with input.servers as [docker_server] with input.run.container as true
	d == set()
}

test_docker_host_is_remote_outside_a_container if {
	d := url.deny with input.servers as [docker_server] with input.run.container as false
	{x.code | some x in d} == {"url_not_allowed"}
}
