# METADATA
# title: User servers
# description: |
#   Which of the servers a run's user brings (userServers, source "user", ids starting u_)
#   are kept: none, the remote (http) ones, or all the ones loadout can run, which are the
#   remote ones too, since loadout never starts a command a user chose. A user server may not
#   claim a shared credential. Every other rule applies to a user server as to a catalog one.
#   The mode is data.tunables.userservers.userServers; any value but remote or all is none.
package loadout.userservers

import data.tunables.userservers as conf

mode := conf.userServers if conf.userServers in {"remote", "all"}

else := "none"

deny contains {
	"server": i, "field": "id", "code": "user_servers_off",
	"msg": "user servers are off (userServers is none): only the catalog's servers are rendered",
} if {
	mode == "none"
	some i, s in input.servers
	s.source == "user"
}

deny contains {
	"server": i, "field": "transport", "code": "user_server_stdio_dropped",
	"msg": stdio_dropped_msg(s),
} if {
	mode == "remote"
	some i, s in input.servers
	s.source == "user"
	s.transport != "http"
}

# The drop is also a run warning, which the result keeps (a warning about a dropped server is
# left out).
warn contains {"code": "user_server_stdio_dropped", "msg": stdio_dropped_msg(s)} if {
	mode == "remote"
	some s in input.servers
	s.source == "user"
	s.transport != "http"
}

stdio_dropped_msg(s) := sprintf("user server %s is stdio and userServers is remote: only http user servers are kept", [s.id])

deny contains {
	"server": i, "field": "transport", "code": "user_server_stdio_refused",
	"msg": "a user server may not start a command on the host: loadout renders http user servers only",
} if {
	mode == "all"
	some i, s in input.servers
	s.source == "user"
	s.transport != "http"
}

deny contains {
	"server": i, "field": "credentials", "code": "user_server_shared",
	"msg": "a user server cannot hand its credential to other users: credentials shared is for catalog servers",
} if {
	some i, s in input.servers
	s.source == "user"
	s.credentials == "shared"
}
