// Package tokens is loadout serve's run-token service: it mints the opaque bearer tokens a
// request's servers ask for (mcpServers[i].token), resolves a presented token to the run,
// server and user it is bound to, and revokes every token of a run (docs/TOKENS.md).
//
// A token is "lrt_" followed by 32 random bytes (crypto/rand) in unpadded base64url. Only its
// SHA-256 is stored: a Store never holds, and this package never logs, a token's value.
//
// # Stores
//
// Tokens live in a Store. Three are provided, chosen by Open: an in-process map (the
// default; lost on exit), a bbolt file (one process, survives restarts) and Redis (shared by
// every serve replica behind a load balancer, keys expiring with the token). All three pass
// the same conformance suite (store_test.go).
//
// # Ownership and concurrency
//
// A Service and every Store are safe for concurrent use. The Service does not own its Store:
// whoever opened the Store closes it, after the last Service call returned.
package tokens

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/host/spec"
)

// Defaults of Config.
const (
	DefaultMaxTTL     = 24 * time.Hour
	DefaultDefaultTTL = time.Hour
)

// Prefix starts every token, so a leaked one is recognizable (secret scanners, log review)
// and a value that is not a token is turned away before any store lookup.
const Prefix = "lrt_"

// randomBytes is the entropy of one token.
const randomBytes = 32

// tokenLen is the length of a token: the prefix and 32 bytes in unpadded base64url.
var tokenLen = len(Prefix) + base64.RawURLEncoding.EncodedLen(randomBytes)

// Errors of a Store and the Service.
var (
	// ErrNotFound: no live token has this value (unknown, expired or revoked).
	ErrNotFound = errors.New("tokens: no live token")
	// ErrRevoked: the run's tokens were revoked; it gets no new ones.
	ErrRevoked = errors.New("tokens: the run was revoked")
)

// Record is what a token is bound to.
type Record struct {
	Run     string    `json:"run"`
	Server  string    `json:"server"`
	User    string    `json:"user"`
	Expires time.Time `json:"expiresAt"`
}

// Key is the SHA-256 of a token's value: what a Store keys a token by.
type Key [sha256.Size]byte

// KeyOf hashes a token value.
func KeyOf(token string) Key { return sha256.Sum256([]byte(token)) }

// String is the key in lowercase hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Entry is one token to store: its key and record.
type Entry struct {
	Key    Key
	Record Record
}

// Store keeps tokens by Key. Implementations are safe for concurrent use.
type Store interface {
	// Put stores entries, which all belong to one run, each live until its Record.Expires.
	// It fails with ErrRevoked, storing nothing, when that run was revoked: a render that
	// races a revoke never leaves a live token behind it.
	Put(ctx context.Context, entries []Entry) error
	// Get returns the record stored under key while it is live, or ErrNotFound.
	Get(ctx context.Context, key Key) (Record, error)
	// RevokeRun deletes every token of run and refuses the run's later Puts for hold (the
	// longest a token may live, so no token of the run can outlive the refusal). It returns
	// how many live tokens it deleted. Once it returned, no Get finds a token of run.
	RevokeRun(ctx context.Context, run string, hold time.Duration) (int, error)
	// Close releases the store.
	Close() error
}

// Config configures a Service.
type Config struct {
	// Store keeps the tokens (required). The Service does not close it.
	Store Store
	// MaxTTL is the longest ttl a request may ask for, and how long a revoked run is refused
	// new tokens; default DefaultMaxTTL.
	MaxTTL time.Duration
	// DefaultTTL is the ttl of a token whose request gives none, at most MaxTTL; default
	// DefaultDefaultTTL (capped at MaxTTL).
	DefaultTTL time.Duration
	// Now is the clock; default time.Now. Tests inject one (the stores take the same).
	Now func() time.Time
	// Rand is the entropy source; default crypto/rand.Reader.
	Rand io.Reader
}

// Service mints, resolves and revokes run tokens over a Store. Build one with New.
type Service struct {
	store      Store
	maxTTL     time.Duration
	defaultTTL time.Duration
	now        func() time.Time
	rand       io.Reader
}

// New validates cfg and returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("tokens: config has no store")
	}
	if cfg.MaxTTL < 0 || cfg.DefaultTTL < 0 {
		return nil, errors.New("tokens: a ttl bound is negative")
	}
	if cfg.MaxTTL == 0 {
		cfg.MaxTTL = DefaultMaxTTL
	}
	if cfg.DefaultTTL == 0 {
		cfg.DefaultTTL = min(DefaultDefaultTTL, cfg.MaxTTL)
	}
	if cfg.DefaultTTL > cfg.MaxTTL {
		return nil, fmt.Errorf("tokens: default ttl %s is longer than the max ttl %s", cfg.DefaultTTL, cfg.MaxTTL)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	return &Service{store: cfg.Store, maxTTL: cfg.MaxTTL, defaultTTL: cfg.DefaultTTL, now: cfg.Now, rand: cfg.Rand}, nil
}

// MaxTTL is the longest ttl a request may ask for.
func (s *Service) MaxTTL() time.Duration { return s.maxTTL }

// Begin starts the minting of one render. The Mint it returns is the render's host.Minter;
// once the render succeeded, Commit makes the tokens of the servers it kept resolvable.
func (s *Service) Begin() *Mint { return &Mint{svc: s} }

// Pinger is a Store that can say whether it answers (Redis); a store without it is in the
// process and always answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Check reports whether the store answers: nil, or why not.
func (s *Service) Check(ctx context.Context) error {
	if p, ok := s.store.(Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Mint holds the tokens minted for one render until they are committed. It is used by one
// render: Mint once, then Commit once.
type Mint struct {
	svc       *Service
	pending   []pending
	committed bool
}

type pending struct {
	value  string
	record Record
}

// Mint mints one token per server id of req that asks for one (the first such server of an
// id decides its ttl). It implements host.Minter: the tokens are returned for the request's
// tokens map and are not resolvable until Commit. A refusal is a *spec.RejectError naming
// the field: run.id missing or invalid, a ttl over MaxTTL, or a stored token for the same id.
func (m *Mint) Mint(_ context.Context, req *spec.Request) ([]spec.Pair, error) {
	if m.pending != nil {
		return nil, errors.New("tokens: Mint called twice for one render")
	}
	var out []spec.Pair
	for i := range req.Servers {
		sv := &req.Servers[i]
		if !sv.Token.Mint {
			continue
		}
		field := "mcpServers[" + strconv.Itoa(sv.Index) + "].token"
		if !ValidRunID(req.Run.ID) {
			what := "missing"
			if req.Run.ID != "" {
				what = strconv.Quote(req.Run.ID) + ", which is not a run id (" + runIDPattern + ")"
			}
			return nil, &spec.RejectError{Field: "run.id", Code: spec.CodeInvalidRunID,
				Message: field + " asks for a run token, which is bound to the run, and run.id is " + what}
		}
		ttl := sv.Token.TTL
		if ttl == 0 {
			ttl = m.svc.defaultTTL
		}
		if ttl > m.svc.maxTTL {
			return nil, &spec.RejectError{Field: field + ".ttl", Code: spec.CodeInvalidToken,
				Message: "ttl " + ttl.String() + " is longer than the longest a token may live here (" + m.svc.maxTTL.String() + ")"}
		}
		if slices.ContainsFunc(req.Tokens, func(p spec.Pair) bool { return p.Name == sv.ID }) {
			return nil, &spec.RejectError{Field: field + ".mint", Code: spec.CodeTokenConflict,
				Message: "the request's tokens map already holds a token for server " + strconv.Quote(sv.ID) + "; give one or the other"}
		}
		if slices.ContainsFunc(out, func(p spec.Pair) bool { return p.Name == sv.ID }) {
			continue // one token per id: the server the policy keeps for the id gets it
		}
		value, err := m.svc.newToken()
		if err != nil {
			return nil, err
		}
		rec := Record{Run: req.Run.ID, Server: sv.ID, User: req.Run.User, Expires: m.svc.now().Add(ttl).UTC()}
		m.pending = append(m.pending, pending{value: value, record: rec})
		out = append(out, spec.Pair{Name: sv.ID, Value: value})
	}
	if m.pending == nil {
		m.pending = []pending{}
	}
	return out, nil
}

// Commit stores the minted tokens of the servers in kept (the render's Result.Servers) and
// returns their records, in mint order. A token of a server the render dropped is never
// stored: nobody holds it. It fails with ErrRevoked when the run was revoked meanwhile.
func (m *Mint) Commit(ctx context.Context, kept []string) ([]Record, error) {
	if m.committed {
		return nil, errors.New("tokens: Commit called twice for one render")
	}
	m.committed = true
	var entries []Entry
	for _, p := range m.pending {
		if slices.Contains(kept, p.record.Server) {
			entries = append(entries, Entry{Key: KeyOf(p.value), Record: p.record})
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if err := m.svc.store.Put(ctx, entries); err != nil {
		return nil, err
	}
	out := make([]Record, len(entries))
	for i, e := range entries {
		out[i] = e.Record
	}
	return out, nil
}

// Values are the minted values, for the caller's error scrubbing; never log them.
func (m *Mint) Values() []string {
	out := make([]string, len(m.pending))
	for i, p := range m.pending {
		out[i] = p.value
	}
	return out
}

// newToken draws a fresh token value.
func (s *Service) newToken() (string, error) {
	var b [randomBytes]byte
	if _, err := io.ReadFull(s.rand, b[:]); err != nil {
		return "", fmt.Errorf("tokens: draw a token: %w", err)
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Resolve returns the record of a live token, or ErrNotFound for a value that is not a
// live token (malformed, unknown, expired or revoked).
func (s *Service) Resolve(ctx context.Context, token string) (Record, error) {
	if !WellFormed(token) {
		return Record{}, ErrNotFound
	}
	rec, err := s.store.Get(ctx, KeyOf(token))
	if err != nil {
		return Record{}, err
	}
	if !s.now().Before(rec.Expires) {
		return Record{}, ErrNotFound
	}
	return rec, nil
}

// Revoke deletes every token of run, and refuses the run new tokens for MaxTTL. It returns
// how many live tokens it deleted; revoking a run with none is not an error.
func (s *Service) Revoke(ctx context.Context, run string) (int, error) {
	if !ValidRunID(run) {
		return 0, fmt.Errorf("tokens: %q is not a run id (%s)", run, runIDPattern)
	}
	return s.store.RevokeRun(ctx, run, s.maxTTL)
}

// WellFormed reports whether token has a token's shape (prefix, length, base64url).
func WellFormed(token string) bool {
	if len(token) != tokenLen || !strings.HasPrefix(token, Prefix) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(token[len(Prefix):])
	return err == nil
}

// runIDPattern is what ValidRunID accepts: safe in a URL path, a Redis key and a log line.
const runIDPattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

// ValidRunID reports whether id matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$.
func ValidRunID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}
