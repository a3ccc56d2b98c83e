package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/host/tokens"
)

// Error codes of the token routes.
const (
	codeTokenNotFound   = "token_not_found"
	codeUnauthorized    = "unauthorized"
	codeTokenStore      = "token_store_unavailable"
	codeBadTokenRequest = "bad_request"
)

// maxResolveBody bounds a resolve request's body: a token and a server id.
const maxResolveBody = 4 << 10

// storeTimeout bounds one token store call of the token routes.
const storeTimeout = 5 * time.Second

// ResolveRequest is the body of POST /v1/tokens/resolve. Token is the run token the caller
// (an MCP server) was presented; Server, when set, is the caller's own server id, and a token
// minted for another server resolves to nothing.
type ResolveRequest struct {
	Token  string `json:"token"`
	Server string `json:"server,omitempty"`
}

// ResolveBody is the document a live token resolves to.
type ResolveBody struct {
	Run       string    `json:"run"`
	Server    string    `json:"server"`
	User      string    `json:"user"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// RevokeBody is the document DELETE /v1/runs/{run} answers: how many live tokens it deleted.
type RevokeBody struct {
	Run     string `json:"run"`
	Revoked int    `json:"revoked"`
}

// authorized checks the token routes' API key: with Config.TokenAPIKey set, the request must
// carry Authorization: Bearer <key>; it answers 401 otherwise.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.apiKey == nil {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(got))
	if ok && subtle.ConstantTimeCompare(sum[:], s.apiKey) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="loadout tokens"`)
	writeError(w, http.StatusUnauthorized, ErrorBody{Error: ErrorInfo{Code: codeUnauthorized, Message: "the token routes need Authorization: Bearer <the serve API key>"}})
	return false
}

func (s *Server) handleResolve(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodPost) || !s.authorized(w, r) {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxResolveBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, ErrorBody{Error: ErrorInfo{Code: OutcomeTooLarge, Message: fmt.Sprintf("body larger than %d bytes", maxResolveBody)}})
			return
		}
		writeError(w, http.StatusBadRequest, ErrorBody{Error: ErrorInfo{Code: codeBadTokenRequest, Message: "read request body"}})
		return
	}
	var req ResolveRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() || req.Token == "" {
		// The decoder's message may quote the body, which holds a token: it is not echoed.
		writeError(w, http.StatusBadRequest, ErrorBody{Error: ErrorInfo{Code: codeBadTokenRequest,
			Message: `body must be {"token": "<run token>"} with an optional "server": "<your server id>"`}})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	rec, err := s.tokens.Resolve(ctx, req.Token)
	if err == nil && req.Server != "" && req.Server != rec.Server {
		err = tokens.ErrNotFound // another server's token: the caller must not learn it exists
	}
	switch {
	case errors.Is(err, tokens.ErrNotFound):
		s.metrics.resolves.WithLabelValues("not_found").Inc()
		writeError(w, http.StatusNotFound, ErrorBody{Error: ErrorInfo{Code: codeTokenNotFound, Message: "no live token (unknown, expired or revoked)"}})
	case err != nil:
		s.metrics.resolves.WithLabelValues("error").Inc()
		s.log.Error("resolve a token", "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, ErrorBody{Error: ErrorInfo{Code: codeTokenStore, Message: "the token store did not answer"}})
	default:
		s.metrics.resolves.WithLabelValues("ok").Inc()
		writeJSON(w, http.StatusOK, ResolveBody{Run: rec.Run, Server: rec.Server, User: rec.User, ExpiresAt: rec.Expires})
	}
}

func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodDelete) || !s.authorized(w, r) {
		return
	}
	run := r.PathValue("run")
	if !tokens.ValidRunID(run) {
		writeError(w, http.StatusBadRequest, ErrorBody{Error: ErrorInfo{Code: codeBadTokenRequest, Message: "the path's run is not a run id (^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$)"}})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	n, err := s.tokens.Revoke(ctx, run)
	if err != nil {
		s.metrics.revokes.WithLabelValues("error").Inc()
		s.log.Error("revoke a run's tokens", "run", run, "err", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, ErrorBody{Error: ErrorInfo{Code: codeTokenStore, Message: "the token store did not answer; the run may not be revoked, retry"}})
		return
	}
	s.metrics.revokes.WithLabelValues("ok").Inc()
	s.metrics.revoked.Add(float64(n))
	s.log.Info("run revoked", "run", run, "tokens", n)
	writeJSON(w, http.StatusOK, RevokeBody{Run: run, Revoked: n})
}
