package policy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParseURL pins what Go reads out of a URL for the policy (input.servers[i].facts.url):
// the base rule's parts and where the two parsers disagree. Which of these a policy allows is
// the URL rules' choice (policies/loadout/url).
func TestParseURL(t *testing.T) {
	t.Parallel()
	// bad lists the facts that flag a problem: b badBytes, u userinfo, m parsers disagree, p badPort.
	tests := []struct {
		name, url, scheme, host string
		port                    int
		loopback                bool
		bad                     string
	}{
		{"https remote", "https://mcp.example.com/mcp", "https", "mcp.example.com", 443, false, ""},
		{"uppercase scheme", "HTTPS://MCP.Example.com/", "https", "mcp.example.com", 443, false, ""},
		{"http localhost any case", "http://LocalHost:8080/", "http", "localhost", 8080, true, ""},
		{"http 127/8", "http://127.1.2.3/", "http", "127.1.2.3", 80, true, ""},
		{"http [::1]", "http://[::1]:3000/mcp", "http", "::1", 3000, true, ""},
		{"long form ::1 is not exactly [::1]", "http://[0:0:0:0:0:0:0:1]/", "http", "0:0:0:0:0:0:0:1", 80, false, ""},
		{"mapped loopback is not [::1]", "http://[::ffff:127.0.0.1]/", "http", "::ffff:127.0.0.1", 80, false, ""},
		{"non-canonical quad", "http://127.0.0.01/", "http", "127.0.0.01", 80, false, ""},
		{"short quad", "http://127.1/", "http", "127.1", 80, false, ""},
		{"trailing dot", "http://localhost./", "http", "localhost.", 80, false, ""},
		{"userinfo hides remote host", "http://127.0.0.1@evil.example/", "http", "evil.example", 80, false, "u"},
		{"empty userinfo", "http://@127.0.0.1/", "http", "127.0.0.1", 80, true, "u"},
		{"backslash trick", `http://evil.example\@127.0.0.1/`, "http", "127.0.0.1", 80, true, "bum"},
		{"at in fragment is no userinfo", "http://127.0.0.1/#@evil.example", "http", "127.0.0.1", 80, true, ""},
		{"at in query", "http://127.0.0.1/?a=@evil", "http", "127.0.0.1", 80, true, ""},
		{"port zero", "http://127.0.0.1:0/", "http", "127.0.0.1", 80, true, "p"},
		{"port too large", "https://h:65536/", "https", "h", 443, false, "p"},
		{"empty port", "https://h:/", "https", "h", 443, false, "p"},
		{"port then at", "http://127.0.0.1:80@evil.example/", "http", "evil.example", 80, false, "u"},
		{"empty host", "http:///mcp", "http", "", 80, false, ""},
		{"space", "https://a b/", "https", "a b", 443, false, "bm"},
		{"non-ascii", "https://exämple.com/", "https", "exämple.com", 443, false, "b"},
		{"percent-encoded host", "http://127.0.0.1%2e/", "http", "127.0.0.1%2e", 80, false, "m"},
		{"other scheme", "ftp://127.0.0.1/", "ftp", "", 0, false, "m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := parseURL(tc.url)
			assert.Equal(t, tc.scheme, u.Scheme, "scheme of %q", tc.url)
			assert.Equal(t, tc.host, u.Host, "host of %q", tc.url)
			assert.Equal(t, tc.port, u.Port, "port of %q", tc.url)
			assert.Equal(t, tc.loopback, u.Loopback, "loopback of %q", tc.url)
			bad := ""
			for _, f := range []struct {
				on   bool
				flag string
			}{{u.BadBytes, "b"}, {u.Userinfo, "u"}, {!u.ParsersAgree, "m"}, {u.BadPort, "p"}} {
				if f.on {
					bad += f.flag
				}
			}
			assert.Equal(t, tc.bad, bad, "problems read in %q", tc.url)
		})
	}
}

func TestCommandBase(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{"/usr/bin/curl": "curl", "npx": "npx", "./bin/sh": "sh", "": "", "a/b/": "b"} {
		assert.Equal(t, want, commandBase(cmd), "commandBase(%q)", cmd)
	}
}

// FuzzParseURL: parsing never fails, and whenever it says the parsers agree, Go's net/url
// reads exactly the scheme and host the policy is shown.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"https://a.example/", `http://x\@127.0.0.1/`, "http://[::1]:9/", "http://@h:0", "ftp://x", "https://h:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u := parseURL(raw)
		if !u.ParsersAgree || !u.BaseMatch {
			return
		}
		parsed, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q: the parsers agree but net/url fails: %v", raw, err)
		}
		if strings.ToLower(parsed.Hostname()) != u.Host || strings.ToLower(parsed.Scheme) != u.Scheme {
			t.Fatalf("%q: the parsers agree but net/url reads %s://%s, the policy %s://%s", raw, parsed.Scheme, parsed.Hostname(), u.Scheme, u.Host)
		}
	})
}
