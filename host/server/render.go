package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/engine"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/host/tokens"
	"github.com/loadout-dev/loadout/internal/namepattern"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Outcomes of a render request: the outcome label of loadout_render_requests_total and the
// "code" of an error body.
const (
	OutcomeOK          = "ok"
	OutcomeBadRequest  = "bad_request"             // 400: unreadable or empty body, bad query, usage error
	OutcomeTooLarge    = "too_large"               // 413
	OutcomeBodyTimeout = "body_timeout"            // 408: the body did not arrive within BodyTimeout
	OutcomeRejected    = "rejected"                // 422: invalid spec or policy deny
	OutcomePlugin      = "plugin_failure"          // 502
	OutcomeOverloaded  = "overloaded"              // 503: the queue is full, or no render slot within QueueWait
	OutcomeTimeout     = "timeout"                 // 503: the request's deadline passed
	OutcomeClosed      = "shutting_down"           // 503: the server is closed
	OutcomeInternal    = "internal"                // 500
	OutcomeTokenStore  = "token_store_unavailable" // 503: the run tokens could not be stored
	OutcomeCanceled    = "canceled"                // the client went away
)

// Error codes of the non-render routes.
const (
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
)

// ErrorBody is the JSON document of every error answer. Dropped is set on 422 when the
// pipeline reported what it dropped before rejecting the request.
type ErrorBody struct {
	Error   ErrorInfo         `json:"error"`
	Dropped []spec.Diagnostic `json:"dropped,omitempty"`
}

// ErrorInfo is the error member of an ErrorBody: a stable code and a message scrubbed of the
// request's secret-bearing values.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// HealthBody is the document GET /healthz answers.
type HealthBody struct {
	// Status is "ok" (200), "degraded" (503: the renderer is loaded but the token store does
	// not answer) or "unavailable" (503: shutting down).
	Status     string    `json:"status"`
	Generation uint64    `json:"generation,omitempty"`
	Plugins    int       `json:"plugins"`
	LoadedAt   time.Time `json:"loadedAt,omitzero"`
	// PolicyRevision is the active policy bundle's revision (absent for a policy directory).
	PolicyRevision string `json:"policyRevision,omitempty"`
	// TokenStore is the run-token store's state (absent once shutting down).
	TokenStore *StoreHealth `json:"tokenStore,omitempty"`
}

// StoreHealth is the token store's state in a HealthBody: "ok", or "unavailable" with why.
type StoreHealth struct {
	State string `json:"state"`
	Error string `json:"error,omitempty"`
}

// healthTimeout bounds the token store check of one /healthz.
const healthTimeout = time.Second

// PluginsBody is the document GET /v1/plugins answers.
type PluginsBody struct {
	Generation uint64            `json:"generation"`
	Plugins    []host.PluginInfo `json:"plugins"`
}

// harnessPattern is the shape of a harness id (the server id rule of docs/SECURITY.md §1).
var harnessPattern = namepattern.MustCompile(`^[a-z0-9][a-z0-9_-]*$`, 64)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/render", s.handleRender)
	mux.Handle("/v1/plugins", s.logged(http.HandlerFunc(s.handlePlugins)))
	mux.Handle("/v1/tokens/resolve", s.logged(http.HandlerFunc(s.handleResolve)))
	mux.Handle("/v1/runs/{run}", s.logged(http.HandlerFunc(s.handleRevoke)))
	mux.Handle("/healthz", s.logged(http.HandlerFunc(s.handleHealth)))
	metricsHandler := promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})
	mux.Handle("/metrics", s.logged(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		metricsHandler.ServeHTTP(w, r)
	})))
	mux.Handle("/", s.logged(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, ErrorBody{Error: ErrorInfo{Code: codeNotFound, Message: "no such route"}})
	})))
	return mux
}

// logged logs one debug line per request of a non-render route (health checks and scrapes
// would flood an info log); render requests have their own info access log.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// allowMethod answers 405 unless r uses method (GET also allows HEAD).
func allowMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, ErrorBody{Error: ErrorInfo{Code: codeMethodNotAllowed, Message: "use " + method}})
	return false
}

func (s *Server) handlePlugins(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodGet) {
		return
	}
	st := s.acquire()
	if st == nil {
		writeError(w, http.StatusServiceUnavailable, ErrorBody{Error: ErrorInfo{Code: OutcomeClosed, Message: "server is shutting down"}})
		return
	}
	defer s.release(st)
	writeJSON(w, http.StatusOK, PluginsBody{Generation: st.gen, Plugins: st.plugins})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodGet) {
		return
	}
	st := s.acquire()
	if st == nil {
		writeJSON(w, http.StatusServiceUnavailable, HealthBody{Status: "unavailable"})
		return
	}
	defer s.release(st)
	hb := HealthBody{Status: "ok", Generation: st.gen, Plugins: len(st.plugins), LoadedAt: st.loadedAt, PolicyRevision: st.revision, TokenStore: &StoreHealth{State: "ok"}}
	status := http.StatusOK
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if err := s.tokens.Check(ctx); err != nil {
		hb.Status, hb.TokenStore = "degraded", &StoreHealth{State: "unavailable", Error: err.Error()}
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, hb)
}

// answer is what one render request is answered with, for the response, metrics and log.
type answer struct {
	status  int
	outcome string
	harness string // metric label
	kind    string // plugin failure kind
	result  *host.Result
	encoded []byte          // the result's JSON (encodeResult), on 200
	tokens  []tokens.Record // the run tokens the render stored
	body    ErrorBody
	err     error // scrubbed, for the log
}

// RenderBody is the document a render answers: the host.Result and, when servers asked for
// run tokens, what each stored token is bound to (never its value, which is only in the
// written files).
type RenderBody struct {
	*host.Result
	Tokens []TokenInfo `json:"tokens,omitempty"`
}

// TokenInfo describes one minted run token.
type TokenInfo struct {
	Server    string    `json:"server"`
	Run       string    `json:"run"`
	User      string    `json:"user"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func (s *Server) handleRender(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := s.newRequestID()
	w.Header().Set("X-Request-Id", id)
	if !allowMethod(w, r, http.MethodPost) {
		return
	}
	s.active.Add(1)
	defer s.active.Add(-1)
	s.metrics.inflight.Inc()
	defer s.metrics.inflight.Dec()

	a := s.render(w, r, id)
	if s.forced.Load() && r.Context().Err() != nil {
		// A forced shutdown cut the render off and closes its connection: no answer reaches
		// the client, and the log says so (status 0) instead of a status nobody got.
		a.status, a.outcome = 0, OutcomeClosed
	} else if a.status == http.StatusOK {
		var toks []TokenInfo
		for _, t := range a.tokens {
			toks = append(toks, TokenInfo{Server: t.Server, Run: t.Run, User: t.User, ExpiresAt: t.Expires})
		}
		b, err := withTokens(a.encoded, toks)
		if err != nil {
			a = failureHarness(http.StatusInternalServerError, OutcomeInternal, internalMessage(id), a.harness)
			writeError(w, a.status, a.body)
		} else {
			writeBytes(w, http.StatusOK, b)
		}
	} else {
		if a.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, a.status, a.body)
	}
	s.metrics.requests.WithLabelValues(a.harness, a.outcome).Inc()
	if a.kind != "" {
		s.metrics.plugin.WithLabelValues(a.kind).Inc()
	}
	attrs := []any{"id", id, "harness", a.harness, "outcome", a.outcome, "status", a.status, "duration", time.Since(start)}
	if a.kind != "" {
		attrs = append(attrs, "kind", a.kind)
	}
	if a.err != nil {
		attrs = append(attrs, "err", a.err.Error())
	}
	s.log.Info("render", attrs...)
}

// render runs one render request and decides its answer. It never panics: a panicking
// renderer is an internal error.
func (s *Server) render(w http.ResponseWriter, r *http.Request, id string) (a answer) {
	a.harness = "none"
	query := r.URL.Query().Get("harness")
	if query != "" && !harnessPattern.MatchString(query) {
		return failure(http.StatusBadRequest, OutcomeBadRequest, "harness query parameter is not a harness id")
	}
	// The body is read, bounded in size and time, before a render slot is taken: a client
	// that sends its body slowly then holds its own connection only, never a slot that
	// other requests wait for.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	body, a2, ok := s.readBody(r)
	if !ok {
		return a2
	}
	if !s.acquireSlot(r.Context()) {
		if r.Context().Err() != nil {
			return failure(http.StatusServiceUnavailable, OutcomeCanceled, "request canceled")
		}
		return failure(http.StatusServiceUnavailable, OutcomeOverloaded, "too many concurrent renders; retry")
	}
	defer func() { <-s.sem }()

	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	st := s.acquire()
	if st == nil {
		return failure(http.StatusServiceUnavailable, OutcomeClosed, "server is shutting down")
	}
	defer s.release(st)
	a.harness = st.label(query)
	if query != "" && !st.harnesses[query] {
		return failureHarness(http.StatusBadRequest, OutcomeBadRequest, fmt.Sprintf("no plugin for harness %q", query), a.harness)
	}

	mint := s.tokens.Begin()
	rr := host.RenderRequest{Body: body, Harness: query, HostEnv: s.cfg.HostEnv, DryRun: s.cfg.Roots == "", Minter: mint}
	var dir string
	var pending *os.File // locked until the render answers (sweep.go)
	if s.cfg.Roots != "" {
		var err error
		dir, rr.Roots, pending, err = makeRoots(s.cfg.Roots, id)
		if err != nil {
			a = failureHarness(http.StatusInternalServerError, OutcomeInternal, internalMessage(id), a.harness)
			a.err = err
			return a
		}
	}

	begin := time.Now()
	res, err := safeRender(ctx, st.r, rr)
	if res != nil || err != nil {
		harness := query
		if harness == "" && res != nil {
			harness = res.Harness
		}
		if harness == "" {
			harness = bodyHarness(body)
		}
		a.harness = st.label(harness)
		s.metrics.duration.WithLabelValues(a.harness).Observe(time.Since(begin).Seconds())
	}
	if res != nil {
		for _, d := range res.Dropped {
			s.metrics.denials.WithLabelValues(d.Code).Inc()
		}
	}
	if err == nil && res == nil {
		err = errors.New("renderer returned no result")
	}
	// The answer is encoded, its lists capped and its size bounded, before any token is
	// stored: a render whose answer cannot be sent leaves no token behind.
	var encoded []byte
	if err == nil {
		res = capReported(res)
		encoded, err = encodeResult(res, s.cfg.MaxResponse)
	}
	// The tokens of the servers the render kept become resolvable only now that it
	// succeeded: a failed render leaves none behind.
	var stored []tokens.Record
	if err == nil {
		stored, err = s.commitTokens(ctx, mint, res.Servers)
	}
	if err != nil {
		if dir != "" {
			if rmErr := os.RemoveAll(dir); rmErr != nil {
				s.log.Error("remove roots of a failed render", "id", id, "err", rmErr)
			}
			pending.Close()
		}
		return s.classify(ctx, r.Context(), id, body, mint.Values(), res, err, a.harness)
	}
	if dir != "" {
		if err := finishRoots(dir, pending); err != nil {
			s.log.Error("mark the roots of a render finished", "id", id, "err", err)
		}
	}
	s.metrics.minted.Add(float64(len(stored)))
	a.status, a.outcome, a.result, a.encoded, a.tokens = http.StatusOK, OutcomeOK, res, encoded, stored
	return a
}

// commitTokens stores the minted tokens of the kept servers. A run revoked while it rendered
// is a refusal naming run.id; a store that fails is answered 503.
func (s *Server) commitTokens(ctx context.Context, mint *tokens.Mint, kept []string) ([]tokens.Record, error) {
	recs, err := mint.Commit(ctx, kept)
	switch {
	case errors.Is(err, tokens.ErrRevoked):
		return nil, &spec.RejectError{Field: "run.id", Code: spec.CodeRunRevoked, Message: "the run's tokens were revoked; it gets no new ones"}
	case err != nil:
		return nil, &tokenStoreError{err: err}
	}
	return recs, nil
}

// tokenStoreError is a token store that failed while a render stored its tokens.
type tokenStoreError struct{ err error }

func (e *tokenStoreError) Error() string { return "store the run tokens: " + e.err.Error() }
func (e *tokenStoreError) Unwrap() error { return e.err }

// label bounds a harness metric label: a loaded harness, "none" or "unknown".
func (st *set) label(harness string) string {
	switch {
	case harness == "":
		return "none"
	case st.harnesses[harness]:
		return harness
	}
	return "unknown"
}

func failure(status int, outcome, msg string) answer {
	return failureHarness(status, outcome, msg, "none")
}

func failureHarness(status int, outcome, msg, harness string) answer {
	return answer{status: status, outcome: outcome, harness: harness, body: ErrorBody{Error: ErrorInfo{Code: outcome, Message: msg}}}
}

// acquireSlot takes a render slot, queueing for up to QueueWait when none is free. It reports
// false when the queue is full, no slot freed up in time, or ctx ended.
func (s *Server) acquireSlot(ctx context.Context) bool {
	select {
	case s.sem <- struct{}{}:
		return true
	default:
	}
	if s.cfg.QueueWait < 0 {
		return false
	}
	if s.queued.Add(1) > int64(s.cfg.QueueLength) {
		s.queued.Add(-1)
		return false
	}
	defer s.queued.Add(-1)
	t := time.NewTimer(s.cfg.QueueWait)
	defer t.Stop()
	select {
	case s.sem <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// readBody reads the request body within MaxBody.
func (s *Server) readBody(r *http.Request) ([]byte, answer, bool) {
	if r.ContentLength > s.cfg.MaxBody {
		return nil, failure(http.StatusRequestEntityTooLarge, OutcomeTooLarge, fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBody)), false
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, s.cfg.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, failure(http.StatusRequestEntityTooLarge, OutcomeTooLarge, fmt.Sprintf("request body larger than %d bytes", s.cfg.MaxBody)), false
	case errors.Is(err, os.ErrDeadlineExceeded):
		a := failure(http.StatusRequestTimeout, OutcomeBodyTimeout, fmt.Sprintf("the request body did not arrive within %s", s.cfg.BodyTimeout))
		a.err = fmt.Errorf("read request body: %w", err)
		return nil, a, false
	case err != nil:
		a := failure(http.StatusBadRequest, OutcomeBadRequest, "read request body")
		a.err = fmt.Errorf("read request body: %w", err)
		return nil, a, false
	case buf.Len() == 0:
		return nil, failure(http.StatusBadRequest, OutcomeBadRequest, "empty request body"), false
	}
	return buf.Bytes(), answer{}, true
}

// safeRender calls r.Render and turns a panic into an error.
func safeRender(ctx context.Context, r Renderer, rr host.RenderRequest) (res *host.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &panicError{value: fmt.Sprint(p), stack: debug.Stack()}
		}
	}()
	return r.Render(ctx, rr)
}

type panicError struct {
	value string
	stack []byte
}

func (e *panicError) Error() string { return "renderer panicked: " + e.value }

// makeRoots creates base/<id>/{config,run,checkout} and returns the request's directory, with
// its pending file locked (sweep.go).
func makeRoots(base, id string) (string, host.Roots, *os.File, error) {
	dir := filepath.Join(base, id)
	roots := host.Roots{
		Config:   filepath.Join(dir, "config"),
		Run:      filepath.Join(dir, "run"),
		Checkout: filepath.Join(dir, "checkout"),
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", host.Roots{}, nil, fmt.Errorf("create roots of request %s: %w", id, err)
	}
	pending, err := claimRoots(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", host.Roots{}, nil, fmt.Errorf("create roots of request %s: %w", id, err)
	}
	for _, d := range []string{roots.Config, roots.Run, roots.Checkout} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(dir)
			pending.Close()
			return "", host.Roots{}, nil, fmt.Errorf("create roots of request %s: %w", id, err)
		}
	}
	return dir, roots, pending, nil
}

// classify turns a render error into an answer: status, outcome, plugin failure kind and a
// scrubbed message.
func (s *Server) classify(ctx, reqCtx context.Context, id string, body []byte, minted []string, res *host.Result, err error, harness string) answer {
	scrub := newErrorScrubber(body, err, minted...)
	clean := errors.New(scrub.clean(err.Error()))
	var a answer
	kind := pluginKind(err)
	class := host.Classify(err)
	if class == host.ClassInternal && kind != "" {
		class = host.ClassPlugin
	}
	var pe *panicError
	var tse *tokenStoreError
	var rtl *responseTooLargeError
	switch {
	case reqCtx.Err() != nil:
		a = failureHarness(http.StatusServiceUnavailable, OutcomeCanceled, "request canceled", harness)
	case ctx.Err() != nil && class != host.ClassPlugin:
		a = failureHarness(http.StatusServiceUnavailable, OutcomeTimeout, fmt.Sprintf("render did not finish within %s", s.cfg.Timeout), harness)
	case errors.As(err, &tse):
		a = failureHarness(http.StatusServiceUnavailable, OutcomeTokenStore, "the token store did not answer; nothing was rendered, retry", harness)
	case errors.As(err, &rtl):
		a = failureHarness(http.StatusRequestEntityTooLarge, OutcomeTooLarge, rtl.Error(), harness)
	case errors.As(err, &pe):
		a = failureHarness(http.StatusInternalServerError, OutcomeInternal, internalMessage(id), harness)
		s.log.Error("renderer panicked", "err", scrub.clean(pe.value), "stack", string(pe.stack))
	case class == host.ClassUsage:
		a = failureHarness(http.StatusBadRequest, OutcomeBadRequest, clean.Error(), harness)
	case class == host.ClassRejected && rejectCode(err) == spec.CodeTooLarge:
		a = failureHarness(http.StatusRequestEntityTooLarge, OutcomeTooLarge, clean.Error(), harness)
	case class == host.ClassRejected && badBodyCodes[rejectCode(err)]:
		a = failureHarness(http.StatusBadRequest, OutcomeBadRequest, clean.Error(), harness)
	case class == host.ClassRejected:
		a = failureHarness(http.StatusUnprocessableEntity, OutcomeRejected, clean.Error(), harness)
		a.body.Dropped = capDiagnostics(droppedOf(res, err))
	case class == host.ClassPlugin:
		if kind == "" {
			kind = "other"
		}
		a = failureHarness(http.StatusBadGateway, OutcomePlugin, "plugin failure ("+kind+"): "+clean.Error(), harness)
		a.kind = kind
	default:
		a = failureHarness(http.StatusInternalServerError, OutcomeInternal, internalMessage(id), harness)
	}
	a.err = clean
	return a
}

// internalMessage is the message of a 500: what went wrong is in the log line of the request
// id, which the answer names (as its X-Request-Id header does).
func internalMessage(id string) string {
	return "internal error (request " + id + "; the server's log has the cause)"
}

// badBodyCodes are the refusals that mean the body is not a JSON object document at all: they
// are answered 400, every other refusal 422.
var badBodyCodes = map[string]bool{
	spec.CodeInvalidJSON:  true,
	spec.CodeInvalidUTF8:  true,
	spec.CodeTrailingData: true,
	spec.CodeNotObject:    true,
}

// rejectCode is the code of the *spec.RejectError in err's chain, or "".
func rejectCode(err error) string {
	var re *spec.RejectError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}

// droppedOf returns what the pipeline dropped before rejecting: the result's Dropped when it
// returned one, else the diagnostics the error carries.
func droppedOf(res *host.Result, err error) []spec.Diagnostic {
	if res != nil && len(res.Dropped) > 0 {
		return res.Dropped
	}
	var d interface{ Diagnostics() []spec.Diagnostic }
	if errors.As(err, &d) {
		return d.Diagnostics()
	}
	return nil
}

// pluginKind names a plugin failure for loadout_plugin_failures_total: an engine failure
// (timeout, memory_limit, abi_version, abi, module_size, output, link, trap), an error the plugin
// returned (plugin_error), or a plan the host refused (check); "" when err is none of these.
func pluginKind(err error) string {
	var te *engine.TrapError
	var ae *abi.Error
	switch {
	case errors.Is(err, engine.ErrTimeout):
		return "timeout"
	case errors.Is(err, engine.ErrMemoryLimit):
		return "memory_limit"
	case errors.Is(err, engine.ErrABIVersion):
		return "abi_version"
	case errors.Is(err, engine.ErrABI):
		return "abi"
	case errors.Is(err, engine.ErrModuleSize):
		return "module_size"
	case errors.Is(err, engine.ErrOutput):
		return "output"
	case errors.Is(err, engine.ErrLink):
		return "link"
	case errors.As(err, &te):
		return "trap"
	case errors.As(err, &ae):
		return "plugin_error"
	}
	var pf *host.PluginFailure
	if errors.As(err, &pf) {
		return "check" // undecodable output or a plan that failed the host's check
	}
	return ""
}

// bodyHarness returns the request's "harness" member when it is a string.
func bodyHarness(body []byte) string {
	var v struct {
		Harness any `json:"harness"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	h, _ := v.Harness.(string)
	return h
}

func writeError(w http.ResponseWriter, status int, body ErrorBody) {
	writeJSON(w, status, body)
}

// writeJSON answers v as compact JSON with a trailing newline.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: ErrorInfo{Code: OutcomeInternal, Message: "encode answer"}})
	}
	writeBytes(w, status, append(b, '\n'))
}

// writeBytes answers b, an encoded JSON document with its trailing newline.
func writeBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
