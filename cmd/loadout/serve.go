package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/server"
	"github.com/loadout-dev/loadout/host/tokens"
)

// serveOptions are the flags of `loadout serve`.
type serveOptions struct {
	addr          string
	roots         string
	maxConcurrent int
	queueLength   int
	queueTimeout  time.Duration
	maxBody       int64
	maxResponse   int64
	timeout       time.Duration
	shutdownGrace time.Duration
	host          hostOptions
	// bundleURL is a bundle server's address to poll for the policy; bundleMin and bundleMax
	// bound the wait between polls, bundleWait how long startup waits for the first bundle.
	bundleURL                        string
	bundleMin, bundleMax, bundleWait time.Duration
	// allowUnsigned accepts an unsigned bundle from bundleURL (no --verification-key).
	allowUnsigned bool

	tokenStore      string
	tokenMaxTTL     time.Duration
	tokenDefaultTTL time.Duration
	tokenAPIKeyFile string
	// allowedOrigins are the web origins whose pages may send renders and token requests.
	allowedOrigins []string
	tokenAllowLost bool

	cpuProfile string
}

func (a *app) serveCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve renders as a JSON HTTP API with health, metrics and hot reload",
		Long: `serve answers the same render as 'loadout render --format json' over HTTP:

  POST /v1/render   body = the request JSON; ?harness= overrides the request's
                    "harness".
                    200 result, 400 bad body or usage, 413 too large, 422 rejected
                    (with the dropped entries), 502 plugin failure, 503 overloaded,
                    timed out or shutting down (Retry-After), 408 body not sent
                    within its deadline, 500 internal (naming the request id).
                    Error bodies are {"error":{"code","message"}}; secrets are never echoed.
                    An answer lists at most 100 drops and 100 warnings (then one
                    "truncated" entry with the count); one over --max-response is 413.
  GET  /v1/plugins  the loaded plugins
  GET  /healthz     200 while a good policy and plugin set is loaded and the token
                    store answers; 503 "degraded" with the store's state when not
  GET  /metrics     Prometheus metrics
  POST /v1/tokens/resolve  body {"token":"lrt_…"[,"server":"<id>"]}: 200 {"run","server",
                    "user","expiresAt"} for a live run token, 404 for an unknown,
                    expired or revoked one
  DELETE /v1/runs/{run}    revoke every token of the run: 200 {"run","revoked":N}

A server of a render may ask for a run token ("token": {"mint": true, "ttl": "2h"}; the
request needs run.id): serve mints an opaque bearer bound to the run, the server and
run.user, renders it where the server's credential goes (stdio: MCP_ACCESS_TOKEN, http:
Authorization: Bearer) and stores only its SHA-256 in --token-store: memory (default),
file:PATH (bbolt, one process) or redis://host:port/db (shared by replicas; serve
refuses a Redis that could lose a revocation in a crash, anything but appendonly yes and
appendfsync always, unless --token-store-allow-lost-revocations). With
--token-api-key-file the two token routes require Authorization: Bearer <that key>.
See docs/TOKENS.md.

At most --max-concurrent renders run at once; a request over the limit queues (at most
--queue-length of them) for up to --queue-timeout, then gets 503; so does a request that
finds the queue full. With --roots every render is written under
ROOTS/<request id>/{config,run,checkout} (the id is the X-Request-Id header), and the
directory of a render a killed server left unfinished is removed at start and every 5
minutes; without it renders are dry runs that return the plan only.

With --policy-bundle-url the policy is an OPA bundle polled from a bundle server with OPA's
downloader (ETag, backoff), signed: --verification-key checks each bundle's signature, and
is required unless --allow-unsigned-bundles. A new revision that verifies and compiles
replaces the policy as a reload does (the same revision and bytes again, from a server that
sends no ETag, are not activated again); a bad one is logged once and the last good one
stays. Each render's result names the policy revision that decided it (policyRevision);
/healthz ("policyRevision") and loadout_policy_revision_info report the active revision.

SIGHUP, or a change to the --policies directory, a --plugin file or the --pins file,
reloads policies and plugins: on success new requests use the new set while requests in
flight finish on the old one; on failure the last good set stays and the error is logged.
SIGINT or SIGTERM stop accepting, let requests in flight finish within --shutdown-grace,
and exit.

A POST must have Content-Type application/json and no Content-Encoding (415 otherwise), and a
request that changes state (a render, the token routes) from a web page of another origin is
refused with 403 (Sec-Fetch-Site, else Origin against Host) unless --allowed-origin names
that origin: a page in a browser on the same machine cannot make a loopback serve render or
mint tokens. Only an --allowed-origin gets CORS answers, so only its pages can send JSON.

The listening address is printed on stderr. Access logs are at info level (--log-level info).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", server.DefaultAddr, "address to listen on")
	o.host.addFlags(f)
	f.StringVar(&o.roots, "roots", "", "write renders under DIR/<request id>/{config,run,checkout} (default: dry runs only)")
	f.IntVar(&o.maxConcurrent, "max-concurrent", 0, "renders running at once (default 2×GOMAXPROCS)")
	f.IntVar(&o.queueLength, "queue-length", 0, "renders waiting for a slot; one more is answered 503 at once (default 4×--max-concurrent)")
	f.DurationVar(&o.queueTimeout, "queue-timeout", server.DefaultQueueWait, "how long a queued render waits for a slot before it is answered 503")
	f.Int64Var(&o.maxBody, "max-body", server.DefaultMaxBody, "largest request body in bytes")
	f.Int64Var(&o.maxResponse, "max-response", server.DefaultMaxResponse, "largest render answer in bytes (a larger one is 413, nothing written)")
	f.DurationVar(&o.timeout, "timeout", server.DefaultTimeout, "deadline of one render request")
	f.DurationVar(&o.shutdownGrace, "shutdown-grace", server.DefaultShutdownGrace, "how long requests in flight may finish on shutdown")
	f.StringVar(&o.bundleURL, "policy-bundle-url", "", "poll the policy as an OPA bundle from this URL (instead of --policies)")
	f.BoolVar(&o.allowUnsigned, "allow-unsigned-bundles", false, "accept --policy-bundle-url bundles without a --verification-key (whoever can serve or alter the bundle then decides the policy)")
	f.DurationVar(&o.bundleMin, "policy-bundle-min-delay", 10*time.Second, "shortest wait between bundle polls")
	f.DurationVar(&o.bundleMax, "policy-bundle-max-delay", 60*time.Second, "longest wait between bundle polls (backoff after failures)")
	f.DurationVar(&o.bundleWait, "policy-bundle-wait", 30*time.Second, "how long startup waits for the first good bundle")
	f.StringVar(&o.tokenStore, "token-store", "memory", "where run tokens are kept: memory, file:PATH or redis://host:port/db")
	f.DurationVar(&o.tokenMaxTTL, "token-max-ttl", tokens.DefaultMaxTTL, "longest ttl a run token may ask for (and how long a revoked run is refused new tokens)")
	f.DurationVar(&o.tokenDefaultTTL, "token-default-ttl", tokens.DefaultDefaultTTL, "ttl of a run token whose request gives none")
	f.StringArrayVar(&o.allowedOrigins, "allowed-origin", nil, "web origin (scheme://host[:port]) whose pages may POST renders and call the token routes (repeatable; every other cross-origin request is refused)")
	f.BoolVar(&o.tokenAllowLost, "token-store-allow-lost-revocations", false, "use a Redis whose persistence may lose a revocation in a crash (default: refuse any but appendonly yes, appendfsync always)")
	f.StringVar(&o.cpuProfile, "cpu-profile", "", "write a CPU profile of the server to FILE when it stops (go tool pprof)")
	f.StringVar(&o.tokenAPIKeyFile, "token-api-key-file", "", "file holding the bearer key /v1/tokens/resolve and DELETE /v1/runs/{run} require (default: open)")
	return cmd
}

// serve runs the server until ctx is cancelled (SIGINT/SIGTERM in main) and reloads on SIGHUP.
func (a *app) serve(ctx context.Context, o serveOptions) error {
	if o.maxConcurrent < 0 {
		return usagef("--max-concurrent: %d is negative", o.maxConcurrent)
	}
	if o.queueLength < 0 {
		return usagef("--queue-length: %d is negative", o.queueLength)
	}
	if o.queueTimeout <= 0 {
		return usagef("--queue-timeout: %s is not positive", o.queueTimeout)
	}
	if o.maxBody <= 0 {
		return usagef("--max-body: %d is not a positive number of bytes", o.maxBody)
	}
	if o.maxResponse <= 0 {
		return usagef("--max-response: %d is not a positive number of bytes", o.maxResponse)
	}
	if o.timeout <= 0 {
		return usagef("--timeout: %s is not positive", o.timeout)
	}
	if o.shutdownGrace <= 0 {
		return usagef("--shutdown-grace: %s is not positive", o.shutdownGrace)
	}
	if o.tokenMaxTTL <= 0 {
		return usagef("--token-max-ttl: %s is not positive", o.tokenMaxTTL)
	}
	if o.tokenDefaultTTL <= 0 || o.tokenDefaultTTL > o.tokenMaxTTL {
		return usagef("--token-default-ttl: %s is not positive and at most --token-max-ttl (%s)", o.tokenDefaultTTL, o.tokenMaxTTL)
	}
	if !validTokenStore(o.tokenStore) {
		// The value is not echoed: a redis URL may carry a password.
		return usagef("--token-store: want memory, file:PATH or redis://host:port/db")
	}
	var apiKey string
	if o.tokenAPIKeyFile != "" {
		b, err := os.ReadFile(o.tokenAPIKeyFile)
		if err != nil {
			return usagef("--token-api-key-file: %v", err)
		}
		apiKey = strings.TrimSpace(string(b))
		if len(apiKey) < 16 || strings.ContainsAny(apiKey, " \t\r\n") {
			return usagef("--token-api-key-file: %s must hold one key of at least 16 characters, without spaces", o.tokenAPIKeyFile)
		}
	}
	if o.roots != "" {
		abs, err := filepath.Abs(o.roots)
		if err != nil {
			return usagef("--roots: %v", err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return usagef("--roots: %s is not a directory", o.roots)
		}
		o.roots = abs
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return usagef("--cpu-profile: %v", err)
		}
		defer stop()
	}
	// A server keeps a few pre-initialized instances per plugin ready off the request path.
	o.host.pool = 2
	var poller *policy.BundlePoller
	var reloadOnBundle chan struct{}
	if o.bundleURL != "" {
		if o.host.policies != "" {
			return usagef("--policy-bundle-url: give either it or --policies")
		}
		verify, err := o.host.bundleOptions()
		if err != nil {
			return err
		}
		if verify.VerificationKey == "" {
			if !o.allowUnsigned {
				return usagef("--policy-bundle-url needs --verification-key FILE, the key its bundles are signed with (opa build --signing-key); --allow-unsigned-bundles accepts unsigned ones")
			}
			a.logger.Warn("policy bundles are not verified (--allow-unsigned-bundles): whoever can serve or alter them decides the policy", "url", o.bundleURL)
		}
		reloadOnBundle = make(chan struct{}, 1)
		poller, err = policy.NewBundlePoller(policy.PollConfig{
			URL: o.bundleURL, Verify: verify, ReplaceDefaults: o.host.replaceDefaults, MinDelay: o.bundleMin, MaxDelay: o.bundleMax, Logger: a.logger,
			OnUpdate: func(context.Context, *policy.Bundle) {
				select {
				case reloadOnBundle <- struct{}{}:
				default: // a reload is already pending; it will read the newest bundle
				}
			},
		})
		if err != nil {
			return usagef("--policy-bundle-url: %v", err)
		}
		poller.Start(ctx)
		defer poller.Stop(context.Background())
		waitCtx, cancel := context.WithTimeout(ctx, o.bundleWait)
		_, err = poller.WaitFirst(waitCtx)
		cancel()
		if err != nil {
			return fmt.Errorf("--policy-bundle-url: no good bundle within %s: %w", o.bundleWait, err)
		}
		<-reloadOnBundle // the first bundle is the first load, not a reload
		o.host.bundle, o.host.bundleURL = poller.Current, o.bundleURL
	}
	loader, err := a.loadHost(o.host)
	if err != nil {
		return err
	}
	var watch []string
	if o.host.policies != "" {
		watch = append(watch, o.host.policies)
	}
	watch = append(watch, o.host.plugins...)
	if o.host.pins != "" {
		watch = append(watch, o.host.pins)
	}

	tokens.RedisLogger(a.logger)
	store, err := tokens.Open(ctx, o.tokenStore, tokens.Options{AllowLostRevocations: o.tokenAllowLost})
	if err != nil {
		return err
	}
	defer store.Close()
	svc, err := tokens.New(tokens.Config{Store: store, MaxTTL: o.tokenMaxTTL, DefaultTTL: o.tokenDefaultTTL})
	if err != nil {
		return err
	}
	if o.tokenAllowLost && strings.HasPrefix(o.tokenStore, "redis") {
		a.logger.Warn("--token-store-allow-lost-revocations: Redis's persistence is not checked; a crash of Redis may bring back revoked tokens or let a revoked run mint again")
	}
	if apiKey == "" {
		a.logger.Warn("the token routes are open: whoever reaches serve can resolve and revoke run tokens; set --token-api-key-file")
	}

	srv, err := server.New(ctx, server.Config{
		Loader:         loader,
		Addr:           o.addr,
		MaxBody:        o.maxBody,
		MaxResponse:    o.maxResponse,
		MaxConcurrent:  o.maxConcurrent,
		QueueLength:    o.queueLength,
		QueueWait:      o.queueTimeout,
		Timeout:        o.timeout,
		ShutdownGrace:  o.shutdownGrace,
		Roots:          o.roots,
		HostEnv:        envPairs(a.environ),
		Watch:          watch,
		Logger:         a.logger,
		Tokens:         svc,
		TokenAPIKey:    apiKey,
		AllowedOrigins: o.allowedOrigins,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		srv.Close()
		return fmt.Errorf("listen %s: %w", o.addr, err)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	fmt.Fprintf(a.stderr, "loadout: listening on http://%s\n", ln.Addr())
	reloadCtx, stopReloads := context.WithCancel(ctx)
	reloadsDone := make(chan struct{})
	go func() {
		defer close(reloadsDone)
		for {
			select {
			case <-reloadCtx.Done():
				return
			case <-hup:
				// Reload logs and counts a failure itself and keeps the last good set.
				_ = srv.Reload(reloadCtx)
			case <-reloadOnBundle:
				_ = srv.Reload(reloadCtx)
			}
		}
	}()
	err = srv.Serve(ctx, ln)
	stopReloads()
	<-reloadsDone
	return err
}

// startCPUProfile profiles the process's CPU into a new file at path (mode 0600) until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// validTokenStore reports whether v has the shape of a --token-store value.
func validTokenStore(v string) bool {
	switch {
	case v == "memory":
		return true
	case strings.HasPrefix(v, "file:"):
		return len(v) > len("file:")
	case strings.HasPrefix(v, "redis://"), strings.HasPrefix(v, "rediss://"):
		return true
	}
	return false
}

// loadHost returns the Loader serve builds its renderer sets with: each load is a complete,
// independent Host from the host flags (openHost), which owns its engine and plugins. Flag
// mistakes that a reload cannot fix are reported now, as usage errors.
func (a *app) loadHost(o hostOptions) (server.Loader, error) {
	if _, ok := engineFactories[o.engine]; !ok {
		if o.engine == "wasmtime" {
			return nil, usagef("--engine wasmtime: this binary was built without it (build with: go build -tags wasmtime ./cmd/loadout, cgo enabled)")
		}
		return nil, usagef("--engine: %q is not one of %s", o.engine, strings.Join(engineNames(), ", "))
	}
	if len(o.plugins) > 0 && o.pins == "" {
		return nil, usagef("--plugin needs --pins FILE: every plugin file must be pinned by its sha256")
	}
	return func(ctx context.Context) (server.Renderer, error) {
		return a.openHost(ctx, o)
	}, nil
}
