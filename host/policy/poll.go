package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/rest"
)

// PollConfig configures a BundlePoller.
type PollConfig struct {
	// URL is the bundle's address on the bundle server.
	URL string
	// Verify says how each bundle is verified (no key: unverified).
	Verify BundleOptions
	// ReplaceDefaults: each bundle is the whole policy (Config.ReplaceDefaults); otherwise it
	// is laid over the embedded defaults.
	ReplaceDefaults bool
	// MinDelay and MaxDelay bound the wait between polls (OPA's polling, with backoff after
	// failures); 0 means 10s and 60s.
	MinDelay, MaxDelay time.Duration
	// Manual: poll only when Trigger is called (tests).
	Manual bool
	// OnUpdate is called, never concurrently, with each new bundle that verified and compiled.
	OnUpdate func(ctx context.Context, b *Bundle)
	Logger   *slog.Logger
}

// BundlePoller keeps the last good policy bundle of a bundle server, with OPA's downloader
// (ETag, long polling where the server offers it, backoff). A bundle that fails to download,
// verify or compile is logged and the last good one stays. Safe for concurrent use.
type BundlePoller struct {
	d          *download.Downloader
	cfg        PollConfig
	mu         sync.Mutex
	last       *Bundle
	lastDigest string // sha256 of the last good bundle's bytes
	lastErr    error
	// failedKey is the revision and digest (or the error) of the last failure logged at
	// ERROR: the same failure on the next polls is logged at debug only.
	failedKey string
	first     chan struct{}
	once      sync.Once
}

// NewBundlePoller prepares a poller; Start begins polling.
func NewBundlePoller(cfg PollConfig) (*BundlePoller, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("policy bundle url %q: want an http(s) URL", cfg.URL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	base := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	restConfig, _ := json.Marshal(map[string]any{"url": base, "name": "loadout-policy"})
	client, err := rest.New(restConfig, nil)
	if err != nil {
		return nil, fmt.Errorf("policy bundle url: %w", err)
	}
	seconds := func(d, def time.Duration) *int64 {
		if d <= 0 {
			d = def
		}
		s := int64(max(d/time.Second, 1))
		return &s
	}
	dc := download.Config{Polling: download.PollingConfig{
		MinDelaySeconds: seconds(cfg.MinDelay, 10*time.Second),
		MaxDelaySeconds: seconds(cfg.MaxDelay, 60*time.Second),
	}}
	if cfg.Manual {
		mode := plugins.TriggerManual
		dc.Trigger = &mode
	}
	if err := dc.ValidateAndInjectDefaults(); err != nil {
		return nil, fmt.Errorf("policy bundle polling: %w", err)
	}
	vc, err := cfg.Verify.verification()
	if err != nil {
		return nil, err
	}
	p := &BundlePoller{cfg: cfg, first: make(chan struct{})}
	d := download.New(dc, client, path).
		WithCallback(p.update).
		WithBundlePersistence(true). // keeps the bytes, for the digest
		WithSizeLimitBytes(maxBundleBytes).
		WithBundleParserOpts(ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: Capabilities(), ProcessAnnotation: true})
	if vc != nil {
		d = d.WithBundleVerificationConfig(vc)
	}
	p.d = d
	return p, nil
}

// Start polls until ctx is done or Stop is called.
func (p *BundlePoller) Start(ctx context.Context) { p.d.Start(ctx) }

// Stop stops polling.
func (p *BundlePoller) Stop(ctx context.Context) { p.d.Stop(ctx) }

// Trigger polls once now (with PollConfig.Manual) and returns the download's error.
func (p *BundlePoller) Trigger(ctx context.Context) error { return p.d.Trigger(ctx) }

// Current is the last good bundle, nil before the first.
func (p *BundlePoller) Current() *Bundle {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// WaitFirst waits for the first good bundle, or ctx; it returns the last error seen.
func (p *BundlePoller) WaitFirst(ctx context.Context) (*Bundle, error) {
	select {
	case <-p.first:
		return p.Current(), nil
	case <-ctx.Done():
		p.mu.Lock()
		defer p.mu.Unlock()
		return nil, errors.Join(ctx.Err(), p.lastErr)
	}
}

// update is the downloader's callback: a new bundle replaces the last good one only when it
// verified (the downloader) and compiles with a decision on a plain request (New). A bundle
// with the revision and the bytes of the last good one (a server that sends no ETag, so every
// poll downloads it again) is not activated again.
func (p *BundlePoller) update(ctx context.Context, u download.Update) error {
	if u.Error != nil {
		err := fmt.Errorf("download policy bundle: %w", u.Error)
		p.fail(err.Error(), err)
		return u.Error
	}
	if u.Bundle == nil {
		return nil // not modified
	}
	b := &Bundle{b: *u.Bundle}
	digest := ""
	if u.Raw != nil {
		h := sha256.New()
		if _, err := io.Copy(h, u.Raw); err == nil {
			digest = hex.EncodeToString(h.Sum(nil))
		}
	}
	p.mu.Lock()
	unchanged := p.last != nil && digest != "" && digest == p.lastDigest && b.Revision() == p.last.Revision()
	p.mu.Unlock()
	if unchanged {
		p.cfg.Logger.Debug("policy bundle unchanged; not activated again", "revision", b.Revision(), "sha256", digest)
		return nil
	}
	if _, err := New(ctx, Config{Bundle: b, Name: p.cfg.URL, ReplaceDefaults: p.cfg.ReplaceDefaults}); err != nil {
		p.fail(b.Revision()+"\x00"+digest, fmt.Errorf("policy bundle revision %q: %w", b.Revision(), err))
		return err
	}
	p.mu.Lock()
	p.last, p.lastDigest, p.lastErr, p.failedKey = b, digest, nil, ""
	p.mu.Unlock()
	p.cfg.Logger.Info("policy bundle activated", "revision", b.Revision(), "etag", u.ETag, "sha256", digest)
	if p.cfg.OnUpdate != nil {
		p.cfg.OnUpdate(ctx, b)
	}
	p.once.Do(func() { close(p.first) })
	return nil
}

// fail records err; it is logged at ERROR once per failing revision (key), at debug after.
func (p *BundlePoller) fail(key string, err error) {
	p.mu.Lock()
	p.lastErr = err
	repeat := key == p.failedKey
	p.failedKey = key
	p.mu.Unlock()
	if repeat {
		p.cfg.Logger.Debug("policy bundle still not activated; the last good policy stays", "err", err)
		return
	}
	p.cfg.Logger.Error("policy bundle not activated; the last good policy stays", "err", err)
}
