// Package server is loadout's HTTP API: `POST /v1/render` runs the same render as
// `loadout render --format json`, `GET /v1/plugins` lists the loaded plugins, `GET /healthz`
// reports whether a good renderer set is loaded and the token store answers, and `GET /metrics` serves Prometheus metrics.
// `POST /v1/tokens/resolve` and `DELETE /v1/runs/{run}` resolve and revoke the run tokens
// renders mint (docs/TOKENS.md).
//
// # Ownership and lifecycle
//
// A Server owns every Renderer its Loader returns. New loads the first set (fail closed: no good
// set, no server). Reload (on SIGHUP, called by the command, or on a file change seen by the
// watcher Serve runs) loads a fresh set and swaps it in atomically; requests in flight finish on
// the set they started with, and a replaced set is closed once its last request is done
// (reference counting). A failed reload keeps the last good set. Serve stops on context
// cancellation: it stops accepting, lets in-flight requests finish within ShutdownGrace, then
// closes the renderer. Close releases the current set without serving.
//
// # Concurrency
//
// A Server is safe for concurrent use: its handler serves requests concurrently, Reload may be
// called from any goroutine (reloads are serialized), and Plugins/Healthy read the current set
// under a lock. While a reload compiles the policies, policy decisions wait for it (OPA's
// partial evaluation writes to terms every evaluation reads; host/policy), about 13 ms for the
// embedded policies. Renders are bounded by MaxConcurrent slots; a request over the limit
// queues, up to QueueLength requests, for at most QueueWait, and is answered 503 with
// Retry-After when the queue is full or its wait is over. A request's headers and body
// are read, each within its own deadline (HeaderTimeout, BodyTimeout), before it takes a slot,
// so slow clients hold only their own connections.
//
// The server does not limit connections per client: in front of untrusted clients, run it
// behind a reverse proxy that does (for example nginx's limit_conn, or Envoy's per-downstream
// connection limits), as for any service that holds a connection per request.
//
// # Secrets
//
// Request bodies are never logged, nor is a run token: a minted token reaches the plugin as a
// placeholder only, is written where the server's credential goes, and is stored hashed
// (host/tokens). Error messages answered to clients or logged are scrubbed with host/redact,
// as `loadout redact` masks logs: once the policy vetted the request, its secrets (every
// spelling of each) and nothing else; before, every value the request carried under an "env",
// "headers" or "tokens" member, since which are secrets is not decided yet. A parser or plugin
// error that quotes a secret cannot echo it, and one that quotes a value that is no secret
// (a path with "loadout" in it, beside a header "X-Client: loadout") stays readable.
package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/host/tokens"
)

// Renderer is what the server renders with: *host.Host implements it. A Renderer must be safe
// for concurrent use; the server calls Close exactly once, after the last Render on it returned.
type Renderer interface {
	Render(ctx context.Context, rr host.RenderRequest) (*host.Result, error)
	Plugins() []host.PluginInfo
	Close(ctx context.Context) error
}

// Loader builds a fresh Renderer from disk (policies and plugins). It is called once by New and
// once per reload, never concurrently with itself. The server owns the Renderer it returns.
type Loader func(ctx context.Context) (Renderer, error)

// Defaults for the zero values of Config.
const (
	DefaultAddr          = "127.0.0.1:8080"
	DefaultMaxBody       = 1 << 20
	DefaultTimeout       = 10 * time.Second
	DefaultBodyTimeout   = 5 * time.Second
	DefaultHeaderTimeout = 5 * time.Second
	DefaultQueueWait     = 5 * time.Second
	DefaultShutdownGrace = 15 * time.Second
	DefaultDebounce      = 250 * time.Millisecond
)

// Config configures a Server. Its zero value works except for Loader, which is required. New
// copies it; changing it afterwards has no effect.
type Config struct {
	// Loader builds the renderer set (required).
	Loader Loader
	// Addr is the address ListenAndServe listens on; default DefaultAddr.
	Addr string
	// MaxBody is the largest request body accepted, in bytes; larger bodies get 413. Default
	// DefaultMaxBody (1 MiB).
	MaxBody int64
	// MaxResponse is the largest render answer sent, in bytes; a render whose answer (its
	// drops and warnings already capped at MaxReported each) is larger is answered 413 and
	// leaves nothing written and no token stored. Default DefaultMaxResponse (4 MiB).
	MaxResponse int64
	// MaxConcurrent bounds the renders running at once; default 2×GOMAXPROCS.
	MaxConcurrent int
	// QueueLength bounds the renders waiting for a slot (each holds its body, up to MaxBody);
	// a render over it is answered 503 at once. Default 4×MaxConcurrent.
	QueueLength int
	// QueueWait is how long a queued render waits for a slot before it is answered 503;
	// default DefaultQueueWait, a negative value answers 503 at once.
	QueueWait time.Duration
	// Timeout bounds each render once its body is read; default DefaultTimeout. A render cut
	// short by it is answered 503 with code "timeout".
	Timeout time.Duration
	// BodyTimeout bounds reading a render request's body, which happens before the request
	// takes a render slot; default DefaultBodyTimeout. Headers have HeaderTimeout.
	BodyTimeout time.Duration
	// HeaderTimeout bounds reading a request's headers; default DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// ShutdownGrace is how long Serve lets in-flight requests finish after its context is
	// cancelled before it cancels them; default DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Roots, when set, makes every render materialize under Roots/<request id>/{config,run,
	// checkout} (created with mode 0700; removed again when the render fails; one a killed
	// process left is removed by Serve's sweep, sweep.go). When empty, renders are dry runs that
	// return the plan only.
	Roots string
	// HostEnv is the host environment the policy filters into each stdio server's spawn
	// environment (host.RenderRequest.HostEnv).
	HostEnv []spec.Pair
	// Watch lists policy directories (watched recursively) and plugin files whose changes
	// trigger a reload while Serve runs.
	Watch []string
	// Debounce is how long the watcher waits for changes to settle before it reloads; default
	// DefaultDebounce.
	Debounce time.Duration
	// Logger receives the access log (info) and reload and failure logs; nil discards.
	Logger *slog.Logger
	// Registry receives the server's metrics and is what /metrics serves; nil makes a fresh
	// registry with the Go and process collectors.
	Registry *prometheus.Registry
	// Tokens mints the run tokens renders ask for and answers the token routes
	// (docs/TOKENS.md); nil makes one over an in-process store with tokens.DefaultMaxTTL. The
	// server does not close its store.
	Tokens *tokens.Service
	// TokenAPIKey, when set, is the bearer POST /v1/tokens/resolve and DELETE /v1/runs/{run}
	// require (Authorization: Bearer <key>); when empty they are open to whoever reaches the
	// server, like every other route.
	TokenAPIKey string
	// AllowedOrigins are the web origins (scheme://host[:port]) whose pages may send
	// state-changing requests (renders, token routes) to the server; every other cross-origin
	// one is refused (guard).
	AllowedOrigins []string
}

// Server is the HTTP API. Build one with New.
type Server struct {
	cfg     Config
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *metrics
	handler http.Handler
	sem     chan struct{}

	reloadMu sync.Mutex // serializes Reload

	// watchHook, when set (by tests, before Serve), is told everything the watcher does, in
	// order, from the watcher's goroutine (watch.go).
	watchHook func(watchEvent)

	mu     sync.Mutex // guards cur, closed, gen and the refs of every set
	cur    *set
	closed bool
	gen    uint64

	idPrefix string
	idSeq    uint64 // guarded by mu

	tokens *tokens.Service
	apiKey []byte // SHA-256 of Config.TokenAPIKey; nil when unset

	active atomic.Int64 // render handlers running
	queued atomic.Int64 // renders waiting for a slot
	forced atomic.Bool  // the grace period ran out: requests still running are cut off
}

// set is one loaded Renderer with its reference count. refs counts the requests using it plus
// one while it is current; the set is closed when refs drops to zero.
type set struct {
	r         Renderer
	revision  string // the policy bundle revision ("" for a policy directory)
	plugins   []host.PluginInfo
	harnesses map[string]bool
	gen       uint64
	loadedAt  time.Time
	refs      int64 // guarded by Server.mu
}

// New validates cfg, registers the metrics and loads the first renderer set. It fails when the
// Loader fails: the server never starts without a good set.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Loader == nil {
		return nil, errors.New("server: config has no loader")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxResponse <= 0 {
		cfg.MaxResponse = DefaultMaxResponse
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.QueueLength <= 0 {
		cfg.QueueLength = 4 * cfg.MaxConcurrent
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	cfg.HostEnv = append([]spec.Pair(nil), cfg.HostEnv...)
	cfg.Watch = append([]string(nil), cfg.Watch...)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cop, err := crossOrigin(cfg.AllowedOrigins, log)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("server: register metrics: %w", err)
	}
	prefix, err := randomHex(6)
	if err != nil {
		return nil, fmt.Errorf("server: request id prefix: %w", err)
	}
	svc := cfg.Tokens
	if svc == nil {
		if svc, err = tokens.New(tokens.Config{Store: tokens.NewMemory(nil)}); err != nil {
			return nil, fmt.Errorf("server: token service: %w", err)
		}
	}
	s := &Server{
		cfg:      cfg,
		log:      log,
		reg:      reg,
		metrics:  m,
		sem:      make(chan struct{}, cfg.MaxConcurrent),
		idPrefix: prefix,
		tokens:   svc,
	}
	if cfg.TokenAPIKey != "" {
		sum := sha256.Sum256([]byte(cfg.TokenAPIKey))
		s.apiKey = sum[:]
	}
	r, err := cfg.Loader(ctx)
	if err != nil {
		m.reloads.WithLabelValues("error").Inc()
		return nil, fmt.Errorf("server: load renderer: %w", err)
	}
	m.reloads.WithLabelValues("ok").Inc()
	s.gen = 1
	s.cur = newSet(r, s.gen)
	m.setRevision(s.cur.revision)
	s.handler = s.guard(s.routes(), cop)
	log.Info("renderer loaded", "generation", s.cur.gen, "plugins", len(s.cur.plugins))
	return s, nil
}

// PolicyRevisioner is a Renderer that knows the revision of its policy bundle (a *host.Host
// does); /healthz and the loadout_policy_revision_info metric report it.
type PolicyRevisioner interface {
	PolicyRevision() string
}

func newSet(r Renderer, gen uint64) *set {
	st := &set{r: r, plugins: r.Plugins(), harnesses: map[string]bool{}, gen: gen, loadedAt: time.Now(), refs: 1}
	if pr, ok := r.(PolicyRevisioner); ok {
		st.revision = pr.PolicyRevision()
	}
	if st.plugins == nil {
		st.plugins = []host.PluginInfo{}
	}
	for _, p := range st.plugins {
		st.harnesses[p.Harness] = true
	}
	return st
}

// Handler returns the server's HTTP handler (the routes of the package doc).
func (s *Server) Handler() http.Handler { return s.handler }

// acquire returns the current set with a reference taken, or nil once the server is closed.
func (s *Server) acquire() *set {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.cur == nil {
		return nil
	}
	s.cur.refs++
	return s.cur
}

// release drops one reference to st and closes its renderer when it was the last.
func (s *Server) release(st *set) {
	s.mu.Lock()
	st.refs--
	last := st.refs == 0
	s.mu.Unlock()
	if last {
		s.closeSet(st)
	}
}

func (s *Server) closeSet(st *set) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	if err := st.r.Close(ctx); err != nil {
		s.log.Error("close renderer", "generation", st.gen, "err", err)
		return
	}
	s.log.Debug("renderer closed", "generation", st.gen)
}

// Reload builds a fresh renderer set with the Loader and swaps it in. On failure the last good
// set stays, the failure is logged at error level and counted, and the error is returned.
func (s *Server) Reload(ctx context.Context) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	start := time.Now()
	r, err := s.cfg.Loader(ctx)
	if err != nil {
		s.metrics.reloads.WithLabelValues("error").Inc()
		s.log.Error("reload failed; keeping the loaded renderer", "err", err, "duration", time.Since(start))
		return fmt.Errorf("reload: %w", err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.metrics.reloads.WithLabelValues("error").Inc()
		s.closeSet(&set{r: r})
		return errors.New("reload: server is closed")
	}
	s.gen++
	next := newSet(r, s.gen)
	old := s.cur
	s.cur = next
	s.mu.Unlock()
	s.metrics.reloads.WithLabelValues("ok").Inc()
	s.metrics.setRevision(next.revision)
	s.log.Info("renderer reloaded", "generation", next.gen, "plugins", len(next.plugins), "policyRevision", next.revision, "duration", time.Since(start))
	if old != nil {
		s.release(old)
	}
	return nil
}

// Plugins returns the plugins of the current set (nil once closed).
func (s *Server) Plugins() []host.PluginInfo {
	st := s.acquire()
	if st == nil {
		return nil
	}
	defer s.release(st)
	return append([]host.PluginInfo(nil), st.plugins...)
}

// Close releases the current renderer set: it is closed now, or when the last request using it
// finishes. Later requests are answered 503. Close is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	cur := s.cur
	s.cur = nil
	s.mu.Unlock()
	if cur != nil {
		s.release(cur)
	}
}

// ListenAndServe listens on Config.Addr and calls Serve. When it cannot listen it closes the
// server, as Serve would have on return.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		s.Close()
		return fmt.Errorf("listen %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is cancelled, running the file watcher when Config.Watch is set.
// Then it shuts down gracefully: it stops accepting, lets in-flight requests finish within
// ShutdownGrace, cancels the rest, waits for them, and closes the renderer. It returns nil after
// a clean shutdown. Serve takes ownership of ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.HeaderTimeout,
		ReadTimeout:       s.cfg.HeaderTimeout + s.cfg.BodyTimeout,
		WriteTimeout:      s.cfg.HeaderTimeout + s.cfg.BodyTimeout + s.cfg.Timeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if len(s.cfg.Watch) > 0 {
		w, err := s.newWatcher()
		if err != nil {
			ln.Close()
			s.Close()
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(watchCtx)
		}()
	}

	if s.cfg.Roots != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.sweepLoop(watchCtx)
		}()
	}

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())

	select {
	case err := <-errc:
		stopWatch()
		s.Close()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stopWatch()
	s.log.Info("shutting down", "grace", s.cfg.ShutdownGrace)
	graceCtx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(graceCtx)
	if err != nil {
		s.log.Warn("grace period over; cancelling in-flight requests", "err", err)
		s.forced.Store(true)
		cancelBase()
		_ = hs.Close() // the grace error is the one to report
	}
	<-errc // http.ErrServerClosed
	s.Close()
	// Wait for the sets to be closed: handlers still running after a forced close release
	// their references as they return.
	s.waitClosed()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// waitClosed waits until the last set was closed or the grace period passed again.
func (s *Server) waitClosed() {
	deadline := time.Now().Add(s.cfg.ShutdownGrace)
	for time.Now().Before(deadline) {
		if s.active.Load() == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newRequestID returns a process-unique request id: a random per-server prefix and a sequence
// number, safe as a directory name.
func (s *Server) newRequestID() string {
	s.mu.Lock()
	s.idSeq++
	n := s.idSeq
	s.mu.Unlock()
	return fmt.Sprintf("%s-%08d", s.idPrefix, n)
}
