package tokens

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix starts every key the Redis store writes.
const DefaultRedisPrefix = "loadout:"

// Redis is the shared Store: every serve replica that points at the same Redis database
// resolves the tokens any of them minted. Keys (under the prefix):
//
//	tok:<hex key>  the token's JSON Record, expiring with the token (PX)
//	run:<run>      set of the run's token keys, expiring with its longest-lived token
//	revoked:<run>  present while the run is refused new tokens (PX hold)
//
// Put and RevokeRun are Lua scripts, so each is atomic with respect to the other and to Get
// on every replica: after RevokeRun returned, no GET finds a token of the run, and a Put that
// comes later finds the revocation. The scripts touch keys they derive from their arguments,
// so the store needs a single Redis (a primary, or Sentinel), not Redis Cluster.
type Redis struct {
	c      *redis.Client
	prefix string
	now    func() time.Time
}

// OpenRedis connects to the Redis database of url (redis://[user:pass@]host:port/db, or
// rediss:// for TLS) and checks it answers and keeps what it is told (CheckPersistence). o.Now
// is the clock the records' expiry is checked on (nil: time.Now); Redis expires the keys on
// its own clock.
func OpenRedis(ctx context.Context, url string, o Options) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		// url.Error quotes the whole URL, password included: keep only what went wrong.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("tokens: redis url: %w", err)
	}
	return NewRedis(ctx, opts, DefaultRedisPrefix, o)
}

// NewRedis is OpenRedis with client options and a key prefix. Unless o.AllowLostRevocations,
// every connection the client makes, the first and each reconnect (after Redis restarted,
// perhaps with other settings), checks the persistence first (CheckPersistence): a store that
// would lose a revocation answers no call.
func NewRedis(ctx context.Context, opts *redis.Options, prefix string, o Options) (*Redis, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if !o.AllowLostRevocations {
		onConnect := opts.OnConnect
		opts.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
			if err := CheckPersistence(ctx, cn); err != nil {
				// The client hands its caller the error inside the one OnConnect returns.
				return fmt.Errorf("on connect: %w", err)
			}
			if onConnect != nil {
				return onConnect(ctx, cn)
			}
			return nil
		}
	}
	c := redis.NewClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("tokens: redis %s: %w", opts.Addr, err)
	}
	return &Redis{c: c, prefix: prefix, now: now}, nil
}

// ErrLostRevocations is the error of a Redis whose persistence would lose a revocation, or
// whose persistence settings cannot be read.
var ErrLostRevocations = errors.New("revocations may be lost")

// CheckPersistence reads Redis's persistence settings (CONFIG GET append*) and fails, with
// ErrLostRevocations in the chain, unless every write reaches the append-only file, fsynced,
// before Redis answers it: appendonly yes and appendfsync always. Anything less loses the
// writes since the last fsync or snapshot when Redis crashes: a revoked token resolves again
// (snapshots) and a revoked run is minted new tokens (no persistence). appendfsync everysec
// keeps them through a crash of the Redis process but not of its machine (up to a second of
// writes), so it is refused as well. An operator who disabled CONFIG gets the same refusal:
// what cannot be read is not assumed.
func CheckPersistence(ctx context.Context, c redis.Cmdable) error {
	cfg, err := c.ConfigGet(ctx, "append*").Result()
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("%w: Redis did not answer CONFIG GET append* (%v), so whether it keeps a revoked run through a crash is unknown; allow CONFIG GET, or accept the loss (serve: --token-store-allow-lost-revocations)", ErrLostRevocations, err)
	}
	if cfg["appendonly"] != "yes" || cfg["appendfsync"] != "always" {
		return fmt.Errorf("%w: Redis has appendonly %q and appendfsync %q, so a crash loses the revocations since its last fsync or snapshot and a revoked run's tokens may resolve again; set appendonly yes and appendfsync always (docs/TOKENS.md), or accept the loss (serve: --token-store-allow-lost-revocations)", ErrLostRevocations, cfg["appendonly"], cfg["appendfsync"])
	}
	return nil
}

// RedisLogger routes the Redis client's own log lines (dial failures, pool trouble) to log
// at warn level instead of the process's standard error. The client has one logger for the
// whole process, so this is for main to call once.
func RedisLogger(log *slog.Logger) { redis.SetLogger(slogPrintf{log}) }

type slogPrintf struct{ log *slog.Logger }

func (l slogPrintf) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}

// putScript: KEYS = revoked:<run>, run:<run>, tok:<key>...; ARGV = per token its ttl in ms,
// record and hex key. It refuses a revoked run, stores each token with its ttl, adds it to
// the run's set and keeps the set alive as long as its longest token.
var putScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('REVOKED')
end
local longest = 0
for i = 3, #KEYS do
  local j = (i - 3) * 3
  local ttl = tonumber(ARGV[j + 1])
  redis.call('SET', KEYS[i], ARGV[j + 2], 'PX', ttl)
  redis.call('SADD', KEYS[2], ARGV[j + 3])
  if ttl > longest then longest = ttl end
end
if redis.call('PTTL', KEYS[2]) < longest then
  redis.call('PEXPIRE', KEYS[2], longest)
end
return #KEYS - 2
`)

// revokeScript: KEYS = revoked:<run>, run:<run>; ARGV = hold in ms, the token key prefix. It
// marks the run revoked, deletes every token of its set and the set, and returns how many
// tokens were still there.
var revokeScript = redis.NewScript(`
local hold = tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < hold then
  redis.call('SET', KEYS[1], '1', 'PX', hold)
end
local n = 0
for _, k in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  n = n + redis.call('DEL', ARGV[2] .. k)
end
redis.call('DEL', KEYS[2])
return n
`)

func (s *Redis) tokKey(k string) string           { return s.prefix + "tok:" + k }
func (s *Redis) runKey(run string) string         { return s.prefix + "run:" + run }
func (s *Redis) revKey(run string) string         { return s.prefix + "revoked:" + run }
func ms(d time.Duration) int64                    { return max(d.Milliseconds(), 1) }
func isRevokedReply(err error) bool               { return err != nil && strings.Contains(err.Error(), "REVOKED") }
func redisErr(op string, err error) error         { return fmt.Errorf("tokens: redis %s: %w", op, err) }
func (s *Redis) remaining(r Record) time.Duration { return r.Expires.Sub(s.now()) }

// Put implements Store.
func (s *Redis) Put(ctx context.Context, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	run := entries[0].Record.Run
	keys := []string{s.revKey(run), s.runKey(run)}
	args := make([]any, 0, 3*len(entries))
	for _, e := range entries {
		if e.Record.Run != run {
			return errors.New("tokens: one Put stores the tokens of one run")
		}
		ttl := s.remaining(e.Record)
		if ttl <= 0 {
			continue // already expired: storing it would only make Redis delete it
		}
		b, err := json.Marshal(e.Record)
		if err != nil {
			return err
		}
		hex := e.Key.String()
		keys = append(keys, s.tokKey(hex))
		args = append(args, strconv.FormatInt(ms(ttl), 10), string(b), hex)
	}
	err := putScript.Run(ctx, s.c, keys, args...).Err()
	switch {
	case isRevokedReply(err):
		return ErrRevoked
	case err != nil:
		return redisErr("put", err)
	}
	return nil
}

// Get implements Store.
func (s *Redis) Get(ctx context.Context, key Key) (Record, error) {
	b, err := s.c.Get(ctx, s.tokKey(key.String())).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return Record{}, ErrNotFound
	case err != nil:
		return Record{}, redisErr("get", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, redisErr("get", err)
	}
	if !s.now().Before(r.Expires) {
		return Record{}, ErrNotFound
	}
	return r, nil
}

// RevokeRun implements Store.
func (s *Redis) RevokeRun(ctx context.Context, run string, hold time.Duration) (int, error) {
	n, err := revokeScript.Run(ctx, s.c, []string{s.revKey(run), s.runKey(run)}, strconv.FormatInt(ms(hold), 10), s.prefix+"tok:").Int()
	if err != nil {
		return 0, redisErr("revoke", err)
	}
	return n, nil
}

// Ping implements Pinger: Redis answers, and (unless lost revocations are allowed) a new
// connection found its persistence keeps every write.
func (s *Redis) Ping(ctx context.Context) error {
	if err := s.c.Ping(ctx).Err(); err != nil {
		return redisErr("ping", err)
	}
	return nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.c.Close() }
