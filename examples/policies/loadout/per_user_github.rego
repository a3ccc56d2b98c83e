# METADATA
# title: Per-user credentials for one host
# description: |
#   docs/POLICIES.md §4.3. The GitHub MCP server acts as whoever holds its credential: only a
#   per-user server (credentials: user, the run's own token) may reach it, and never with a
#   configured Authorization header.
package loadout.per_user_github

github_host := "github.mcp.corp.example"

deny contains {
	"server": i, "field": "credentials", "code": "per_user_required",
	"msg": sprintf("%s: servers on %s must use per-user credentials", [s.id, github_host]),
} if {
	some i, s in input.servers
	s.transport == "http"
	s.facts.url.host == github_host
	s.credentials != "user"
}
