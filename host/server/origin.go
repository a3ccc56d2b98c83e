package server

import (
	"fmt"
	"log/slog"
	"mime"
	"net/http"
)

// Codes of the requests the guard refuses.
const (
	codeCrossOrigin      = "cross_origin"
	codeUnsupportedMedia = "unsupported_media_type"
)

// guard refuses, before any route runs, the requests a web page could make a browser send to
// a loopback server without a CORS preflight, so that no render (files under Roots) and no
// token happens on a page's behalf:
//
//   - a cross-origin request with a method that changes state (POST, DELETE, …): Sec-Fetch-Site
//     other than same-origin or none, or else an Origin that is not the server's own, unless
//     the origin is one of Config.AllowedOrigins (net/http's CrossOriginProtection), answered
//     403;
//   - a POST whose Content-Type is not application/json or whose Content-Encoding is set (a
//     "simple" cross-site request can only send text/plain, form or multipart bodies, or no
//     type at all), answered 415.
//
// Safe methods (GET, HEAD, OPTIONS) pass. Only an allowed origin gets CORS headers (its
// preflight is answered), so only its pages can send JSON or read an answer. Each refusal is
// logged at warn level: a page that tries is worth knowing about.
func (s *Server) guard(next http.Handler, og *originGuard) http.Handler {
	json := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); og.allowed[origin] {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Request-Id")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if r.Method == http.MethodPost {
			if msg := jsonOnly(r); msg != "" {
				s.log.Warn("request refused: not application/json", "method", r.Method, "path", r.URL.Path,
					"contentType", r.Header.Get("Content-Type"), "origin", r.Header.Get("Origin"))
				writeError(w, http.StatusUnsupportedMediaType, ErrorBody{Error: ErrorInfo{Code: codeUnsupportedMedia, Message: msg}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
	return og.cop.Handler(json)
}

// originGuard is the cross-origin check of guard and the origins it trusts.
type originGuard struct {
	cop     *http.CrossOriginProtection
	allowed map[string]bool
}

// crossOrigin builds the cross-origin check of guard, trusting the allowed origins; it logs
// each refusal to log.
func crossOrigin(allowed []string, log *slog.Logger) (*originGuard, error) {
	og := &originGuard{cop: http.NewCrossOriginProtection(), allowed: map[string]bool{}}
	for _, o := range allowed {
		if err := og.cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("allowed origin: %w", err)
		}
		og.allowed[o] = true
	}
	og.cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Warn("request refused: cross-origin", "method", r.Method, "path", r.URL.Path,
			"origin", r.Header.Get("Origin"), "secFetchSite", r.Header.Get("Sec-Fetch-Site"))
		writeError(w, http.StatusForbidden, ErrorBody{Error: ErrorInfo{Code: codeCrossOrigin,
			Message: "cross-origin request refused: the server answers its own origin and the --allowed-origin ones"}})
	}))
	return og, nil
}

// jsonOnly says what is wrong with the body's media type, or "" for application/json (with a
// charset of utf-8 at most) and no Content-Encoding.
func jsonOnly(r *http.Request) string {
	if enc := r.Header.Values("Content-Encoding"); len(enc) > 0 {
		return "Content-Encoding is not accepted: send the body as plain application/json"
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return "Content-Type must be application/json"
	}
	for k, v := range params {
		if k != "charset" || (v != "utf-8" && v != "UTF-8") {
			return "Content-Type must be application/json (charset utf-8 at most)"
		}
	}
	return ""
}
