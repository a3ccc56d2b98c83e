package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a web page can make a browser send without a preflight never reaches a route: no render,
// no token route; a request naming an --allowed-origin, a same-origin one and one without
// browser headers (curl, a platform) pass.
func TestGuardRefusesCrossSiteRequests(t *testing.T) {
	f := newFake("a")
	s, _ := newTestServer(t, Config{AllowedOrigins: []string{"https://console.example"}}, fixedLoader(f))
	h := s.Handler()
	send := func(method, target string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, target, strings.NewReader(requestBody("claude")))
		req.Host = "127.0.0.1:8080"
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const jsonType = "application/json"
	refused := []struct {
		name   string
		method string
		target string
		header map[string]string
		status int
		code   string
	}{
		{"text/plain", "POST", "/v1/render", map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, 415, codeUnsupportedMedia},
		{"form", "POST", "/v1/render", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, codeUnsupportedMedia},
		{"multipart", "POST", "/v1/render", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415, codeUnsupportedMedia},
		{"no type", "POST", "/v1/render", nil, 415, codeUnsupportedMedia},
		{"json with another parameter", "POST", "/v1/render", map[string]string{"Content-Type": "application/json; x=1"}, 415, codeUnsupportedMedia},
		{"content encoding", "POST", "/v1/render", map[string]string{"Content-Type": jsonType, "Content-Encoding": "gzip"}, 415, codeUnsupportedMedia},
		{"token route text/plain", "POST", "/v1/tokens/resolve", map[string]string{"Content-Type": "text/plain"}, 415, codeUnsupportedMedia},
		{"cross-site fetch", "POST", "/v1/render", map[string]string{"Content-Type": jsonType, "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, codeCrossOrigin},
		{"same-site other port", "POST", "/v1/render", map[string]string{"Content-Type": jsonType, "Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:9999"}, 403, codeCrossOrigin},
		{"other origin, no Sec-Fetch-Site", "POST", "/v1/render", map[string]string{"Content-Type": jsonType, "Origin": "http://localhost:9999"}, 403, codeCrossOrigin},
		{"null origin", "POST", "/v1/render", map[string]string{"Content-Type": jsonType, "Origin": "null"}, 403, codeCrossOrigin},
		{"cross-site revoke", "DELETE", "/v1/runs/r1", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, codeCrossOrigin},
		{"cross-site text/plain", "POST", "/v1/render", map[string]string{"Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, codeCrossOrigin},
	}
	for _, tc := range refused {
		rec := send(tc.method, tc.target, tc.header)
		assert.Equal(t, tc.status, rec.Code, "%s: %s", tc.name, rec.Body)
		assert.Contains(t, rec.Body.String(), `"code":"`+tc.code+`"`, tc.name)
	}
	require.Zero(t, f.calls.Load(), "no refused request rendered")

	for name, header := range map[string]map[string]string{
		"no browser headers": {"Content-Type": jsonType},
		"charset utf-8":      {"Content-Type": "application/json; charset=utf-8"},
		"same origin":        {"Content-Type": jsonType, "Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"},
		"allowed origin":     {"Content-Type": jsonType, "Sec-Fetch-Site": "cross-site", "Origin": "https://console.example"},
	} {
		rec := send("POST", "/v1/render", header)
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body)
	}
	assert.Equal(t, int64(4), f.calls.Load())
	rec := send("GET", "/healthz", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	assert.Equal(t, http.StatusOK, rec.Code, "a safe method passes")
	assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "no CORS header: the page cannot read it")

	// Only an allowed origin's preflight is answered.
	pre := map[string]string{"Origin": "https://console.example", "Sec-Fetch-Site": "cross-site", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
	rec = send("OPTIONS", "/v1/render", pre)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Equal(t, "https://console.example", rec.Header().Get("Access-Control-Allow-Origin"))
	assert.Contains(t, rec.Header().Get("Access-Control-Allow-Headers"), "Content-Type")
	pre["Origin"] = "https://evil.example"
	rec = send("OPTIONS", "/v1/render", pre)
	assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "another origin's preflight gets no CORS answer")
	assert.Equal(t, int64(4), f.calls.Load(), "preflights render nothing")
}

func TestBadAllowedOrigin(t *testing.T) {
	_, err := New(t.Context(), Config{Loader: fixedLoader(newFake("a")), AllowedOrigins: []string{"console.example/path"}})
	assert.ErrorContains(t, err, "allowed origin")
}
