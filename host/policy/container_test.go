package policy

import "testing"

func TestContainerURLRewritesOnlyLoopbackHosts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://localhost:8080/mcp?x=1", "http://host.docker.internal:8080/mcp?x=1"},
		{"http://LocalHost/mcp", "http://host.docker.internal/mcp"},
		{"http://127.0.0.1:3000", "http://host.docker.internal:3000"},
		{"http://[::1]:9/a#f", "http://host.docker.internal:9/a#f"},
		{"https://mcp.example.com/mcp", ""},
		{"http://127.1/mcp", ""},                // not a canonical loopback
		{"http://u@localhost/mcp", ""},          // userinfo is refused by the URL rules, not rewritten
		{"http://host.docker.internal/mcp", ""}, // already the container's name
	}
	for _, tc := range tests {
		got, ok := containerURL(tc.in)
		switch {
		case tc.want == "" && (ok || got != tc.in):
			t.Errorf("containerURL(%q) = %q, %t; want it unchanged", tc.in, got, ok)
		case tc.want != "" && (!ok || got != tc.want):
			t.Errorf("containerURL(%q) = %q, %t; want %q", tc.in, got, ok, tc.want)
		}
		if ok && !parseURL(got).DockerHost {
			t.Errorf("containerURL(%q) = %q: the result's host is not %s", tc.in, got, ContainerHost)
		}
	}
}
