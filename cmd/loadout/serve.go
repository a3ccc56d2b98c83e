package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/server"
	"github.com/loadout-dev/loadout/host/spec"
)

// serveOptions are the flags of `loadout serve`.
type serveOptions struct {
	addr          string
	roots         string
	maxConcurrent int
	maxBody       int64
	timeout       time.Duration
	shutdownGrace time.Duration
	host          hostOptions
}

// hostOptions are the flags that say what the renderer set is built from.
type hostOptions struct {
	policies string   // policy directory; "" = the embedded defaults
	plugins  []string // plugin .wasm files added to the built-in ones
	engine   string   // "wazero" or "wasmtime"
}

func (a *app) serveCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve renders as a JSON HTTP API with health, metrics and hot reload",
		Long: `serve answers the same render as 'loadout render --format json' over HTTP:

  POST /v1/render   body = the request JSON; ?harness= overrides its "harness".
                    200 result, 400 bad body or usage, 413 too large, 422 rejected
                    (with the dropped entries), 502 plugin failure, 503 overloaded,
                    timed out or shutting down (Retry-After), 500 internal.
                    Error bodies are {"error":{"code","message"}}; secrets are never echoed.
  GET  /v1/plugins  the loaded plugins
  GET  /healthz     200 while a good policy and plugin set is loaded
  GET  /metrics     Prometheus metrics

At most --max-concurrent renders run at once; a request over the limit waits up to 100ms
for a slot, then gets 503. With --roots every render is written under
ROOTS/<request id>/{config,run,checkout} (the id is the X-Request-Id header); without it
renders are dry runs that return the plan only.

SIGHUP, or a change to the --policies directory or a --plugin file, reloads policies and
plugins: on success new requests use the new set while requests in flight finish on the
old one; on failure the last good set stays and the error is logged. SIGINT or SIGTERM stop
accepting, let requests in flight finish within --shutdown-grace, and exit.

The listening address is printed on stderr. Access logs are at info level (--log-level info).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", server.DefaultAddr, "address to listen on")
	f.StringVar(&o.host.policies, "policies", "", "policy directory (default: the embedded policies); watched for changes")
	f.StringArrayVar(&o.host.plugins, "plugin", nil, "renderer plugin .wasm file, repeatable; watched for changes")
	f.StringVar(&o.host.engine, "engine", "wazero", "WebAssembly engine: wazero or wasmtime (needs a build with -tags wasmtime)")
	f.StringVar(&o.roots, "roots", "", "write renders under DIR/<request id>/{config,run,checkout} (default: dry runs only)")
	f.IntVar(&o.maxConcurrent, "max-concurrent", 0, "renders running at once (default 2×GOMAXPROCS)")
	f.Int64Var(&o.maxBody, "max-body", server.DefaultMaxBody, "largest request body in bytes")
	f.DurationVar(&o.timeout, "timeout", server.DefaultTimeout, "deadline of one render request")
	f.DurationVar(&o.shutdownGrace, "shutdown-grace", server.DefaultShutdownGrace, "how long requests in flight may finish on shutdown")
	return cmd
}

// serve runs the server until ctx is cancelled (SIGINT/SIGTERM in main) and reloads on SIGHUP.
func (a *app) serve(ctx context.Context, o serveOptions) error {
	if o.maxConcurrent < 0 {
		return usagef("--max-concurrent: %d is negative", o.maxConcurrent)
	}
	if o.maxBody <= 0 {
		return usagef("--max-body: %d is not a positive number of bytes", o.maxBody)
	}
	if o.timeout <= 0 {
		return usagef("--timeout: %s is not positive", o.timeout)
	}
	if o.shutdownGrace <= 0 {
		return usagef("--shutdown-grace: %s is not positive", o.shutdownGrace)
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
	loader, err := a.loadHost(o.host)
	if err != nil {
		return err
	}
	var watch []string
	if o.host.policies != "" {
		watch = append(watch, o.host.policies)
	}
	watch = append(watch, o.host.plugins...)

	srv, err := server.New(ctx, server.Config{
		Loader:        loader,
		Addr:          o.addr,
		MaxBody:       o.maxBody,
		MaxConcurrent: o.maxConcurrent,
		Timeout:       o.timeout,
		ShutdownGrace: o.shutdownGrace,
		Roots:         o.roots,
		HostEnv:       envPairs(a.environ),
		Watch:         watch,
		Logger:        a.logger,
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
			}
		}
	}()
	err = srv.Serve(ctx, ln)
	stopReloads()
	<-reloadsDone
	return err
}

// loadHost returns the Loader `serve` builds its renderer set with, after checking the flags
// that name files.
//
// It is the one place that maps the serve flags to the render pipeline. Until the host facade's
// constructor (host.New with host.Config) is available, the renderer is the stateless
// host.Render pipeline: the flags are validated and the files they name are re-read on every
// load (so a missing or unreadable file fails a reload), but they do not change the render yet.
// Replace the body with the shared flag → host.Config helper and host.New.
func (a *app) loadHost(o hostOptions) (server.Loader, error) {
	if o.engine != "wazero" && o.engine != "wasmtime" {
		return nil, usagef("--engine: %q is not one of wazero, wasmtime", o.engine)
	}
	check := func() error {
		var errs []error
		if o.policies != "" {
			if fi, err := os.Stat(o.policies); err != nil {
				errs = append(errs, fmt.Errorf("policies: %w", err))
			} else if !fi.IsDir() {
				errs = append(errs, fmt.Errorf("policies: %s is not a directory", o.policies))
			}
		}
		for _, p := range o.plugins {
			if !strings.HasSuffix(p, ".wasm") {
				errs = append(errs, fmt.Errorf("plugin %s: not a .wasm file", p))
				continue
			}
			f, err := os.Open(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("plugin: %w", err))
				continue
			}
			f.Close()
		}
		return errors.Join(errs...)
	}
	if err := check(); err != nil {
		return nil, usagef("%v", err)
	}
	return func(context.Context) (server.Renderer, error) {
		if err := check(); err != nil {
			return nil, err
		}
		return pipelineRenderer{}, nil
	}, nil
}

// pipelineRenderer serves renders with the stateless host.Render pipeline. It holds nothing to
// close and lists no loaded plugins.
type pipelineRenderer struct{}

func (pipelineRenderer) Render(ctx context.Context, rr host.RenderRequest) (*host.Result, error) {
	return host.Render(ctx, rr)
}
func (pipelineRenderer) Plugins() []host.PluginInfo  { return []host.PluginInfo{} }
func (pipelineRenderer) Close(context.Context) error { return nil }

// envPairs turns an environment ("NAME=value" entries) into ordered pairs, skipping malformed
// entries.
func envPairs(environ []string) []spec.Pair {
	pairs := make([]spec.Pair, 0, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		pairs = append(pairs, spec.Pair{Name: name, Value: value})
	}
	return pairs
}
