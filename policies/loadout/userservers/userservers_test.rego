package loadout.userservers_test

import data.fixtures.userservers as fixture
import data.loadout.allow
import data.loadout.url
import data.loadout.userservers

# codes is each server's deny codes from every package that judges it here, by id, under
# mode m.
codes(m) := {s.id: {d.code |
	some d in denies(m)
	d.server == i
} |
	some i, s in fixture.servers
}

denies(m) := (a | b) | c if {
	a := userservers.deny with input as fixture with data.tunables.userservers.userServers as m
	b := allow.deny with input as fixture
	c := url.deny with input as fixture
}

test_none_drops_every_user_server if {
	c := codes("none")
	c.docs == set()
	c.u_claimed == {"id_reserved"}
	c.u_notes == {"user_servers_off"}
	c.u_runner == {"user_servers_off"}
	c.u_plain == {"user_servers_off", "url_not_allowed"}
}

test_an_unknown_mode_is_none if {
	codes("everything").u_notes == {"user_servers_off"}
	codes("REMOTE").u_notes == {"user_servers_off"}
}

test_remote_keeps_http_and_drops_stdio_with_a_warning if {
	c := codes("remote")
	c.u_notes == set()
	c.u_runner == {"user_server_stdio_dropped"}
	w := userservers.warn with input as fixture with data.tunables.userservers.userServers as "remote"
	{x.code | some x in w} == {"user_server_stdio_dropped"}
	every x in w {
		not x.server
	}
	count(w) == 2
}

test_all_refuses_stdio_as_an_error if {
	c := codes("all")
	c.u_notes == set()
	c.u_runner == {"user_server_stdio_refused"}
	c.u_loader == {"user_server_stdio_refused"}
	w := userservers.warn with input as fixture with data.tunables.userservers.userServers as "all"
	count(w) == 0
}

# Every other rule judges a user server as it judges a catalog one.
test_other_rules_apply_to_user_servers if {
	c := codes("all")
	c.u_plain == {"url_not_allowed"}
	c.u_borrowed == {"user_server_shared"}
	c.u_servers == set()
	d := allow.drop with input as fixture
	{[fixture.servers[x.server].id, x.key, x.code] | some x in d} == {["u_loader", "LD_PRELOAD", "env_key_refused"]}
}

test_the_user_prefix_is_reserved_for_user_servers if {
	c := codes("all")
	c.u_claimed == {"id_reserved"}
	c.u_notes == set()
}
