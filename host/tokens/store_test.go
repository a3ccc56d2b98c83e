package tokens

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/loadout-dev/loadout/internal/testredis"
)

// clock is an injectable clock: it moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// harness is one store under the conformance suite.
type harness struct {
	store Store
	// clock drives the store's expiry; nil when the store expires on real time (Redis,
	// whose keys expire on its own clock): then expiry is shown with short ttls and polling.
	clock *clock
	// now is the store's clock.
	now func() time.Time
	// dump returns every key and value the store holds.
	dump func(t *testing.T) []byte
	// raw, when set, returns the store's bytes at rest (a bbolt file, freed pages and all).
	raw func(t *testing.T) []byte
}

type storeKind struct {
	name string
	open func(t *testing.T) harness
}

var storeKinds = []storeKind{
	{"memory", func(t *testing.T) harness {
		c := newClock()
		m := NewMemory(c.Now)
		t.Cleanup(func() { m.Close() })
		return harness{store: m, clock: c, now: c.Now, dump: func(*testing.T) []byte { return dumpMemory(m) }}
	}},
	{"bolt", func(t *testing.T) harness {
		c := newClock()
		path := filepath.Join(t.TempDir(), "tokens.db")
		b, err := OpenBolt(path, c.Now)
		require.NoError(t, err)
		t.Cleanup(func() { b.Close() })
		return harness{store: b, clock: c, now: c.Now, dump: func(t *testing.T) []byte { return dumpBolt(t, b) },
			raw: func(t *testing.T) []byte {
				raw, err := os.ReadFile(path)
				require.NoError(t, err)
				return raw
			}}
	}},
	{"redis", func(t *testing.T) harness {
		addr := testredis.Start(t)
		r, err := OpenRedis(context.Background(), "redis://"+addr+"/0", Options{})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return harness{store: r, now: time.Now, dump: func(t *testing.T) []byte { return dumpRedis(t, r.c) }}
	}},
}

func dumpMemory(m *Memory) []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var b bytes.Buffer
	for k, r := range m.toks {
		fmt.Fprintf(&b, "%x %s %+v\n", k[:], k, r)
	}
	for run, set := range m.runs {
		for k := range set {
			fmt.Fprintf(&b, "%s %x\n", run, k[:])
		}
	}
	for run, until := range m.revoked {
		fmt.Fprintf(&b, "%s %s\n", run, until)
	}
	return b.Bytes()
}

// dumpBolt is every key and value of every bucket.
func dumpBolt(t *testing.T, s *Bolt) []byte {
	var b bytes.Buffer
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			b.Write(name)
			return bk.ForEach(func(k, v []byte) error {
				b.Write(k)
				b.Write(v)
				return nil
			})
		})
	}))
	return b.Bytes()
}

// dumpRedis is every key of the database with its value or members.
func dumpRedis(t *testing.T, c *redis.Client) []byte {
	ctx := context.Background()
	var b bytes.Buffer
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		b.WriteString(k + "\n")
		typ, err := c.Type(ctx, k).Result()
		require.NoError(t, err)
		switch typ {
		case "string":
			v, err := c.Get(ctx, k).Result()
			if !errors.Is(err, redis.Nil) {
				require.NoError(t, err)
			}
			b.WriteString(v + "\n")
		case "set":
			ms, err := c.SMembers(ctx, k).Result()
			require.NoError(t, err)
			for _, m := range ms {
				b.WriteString(m + "\n")
			}
		case "none":
		default:
			t.Fatalf("redis key %s has type %s, which the store never writes", k, typ)
		}
	}
	return b.Bytes()
}

func entry(t *testing.T, run, server string, expires time.Time) (string, Entry) {
	t.Helper()
	svc, err := New(Config{Store: NewMemory(nil)})
	require.NoError(t, err)
	v, err := svc.newToken()
	require.NoError(t, err)
	return v, Entry{Key: KeyOf(v), Record: Record{Run: run, Server: server, User: "alice", Expires: expires.UTC()}}
}

// TestStoreConformance runs the same suite against every store.
func TestStoreConformance(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Run("PutGet", func(t *testing.T) { testPutGet(t, k.open(t)) })
			t.Run("Revoke", func(t *testing.T) { testRevoke(t, k.open(t)) })
			t.Run("RevokeUnderLoad", func(t *testing.T) { testRevokeUnderLoad(t, k.open(t)) })
			t.Run("Expiry", func(t *testing.T) { testExpiry(t, k.open(t)) })
			t.Run("RevokeHoldEnds", func(t *testing.T) { testRevokeHoldEnds(t, k.open(t)) })
			t.Run("Hashed", func(t *testing.T) { testHashed(t, k.open(t)) })
		})
	}
}

func testPutGet(t *testing.T, h harness) {
	ctx := context.Background()
	exp := h.now().Add(time.Hour)
	_, a := entry(t, "run-1", "docs", exp)
	_, b := entry(t, "run-1", "gh", exp.Add(time.Minute))
	require.NoError(t, h.store.Put(ctx, []Entry{a, b}))
	for _, e := range []Entry{a, b} {
		got, err := h.store.Get(ctx, e.Key)
		require.NoError(t, err)
		assert.Equal(t, e.Record.Run, got.Run)
		assert.Equal(t, e.Record.Server, got.Server)
		assert.Equal(t, e.Record.User, got.User)
		assert.True(t, e.Record.Expires.Equal(got.Expires), "expiry %s, want %s", got.Expires, e.Record.Expires)
	}
	_, err := h.store.Get(ctx, KeyOf("lrt_unknown"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, h.store.Put(ctx, nil), "an empty Put")

	_, c := entry(t, "run-2", "docs", exp)
	assert.Error(t, h.store.Put(ctx, []Entry{a, c}), "a Put mixing runs")
}

func testRevoke(t *testing.T, h harness) {
	ctx := context.Background()
	exp := h.now().Add(time.Hour)
	var run1 []Entry
	for _, s := range []string{"a", "b", "c"} {
		_, e := entry(t, "run-1", s, exp)
		run1 = append(run1, e)
	}
	require.NoError(t, h.store.Put(ctx, run1[:2]))
	require.NoError(t, h.store.Put(ctx, run1[2:]))
	_, other := entry(t, "run-2", "a", exp)
	require.NoError(t, h.store.Put(ctx, []Entry{other}))

	n, err := h.store.RevokeRun(ctx, "run-1", 2*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for _, e := range run1 {
		_, err := h.store.Get(ctx, e.Key)
		assert.ErrorIs(t, err, ErrNotFound, "a revoked token")
	}
	_, err = h.store.Get(ctx, other.Key)
	assert.NoError(t, err, "another run's token")

	// The run gets no new token: a render racing the revoke leaves none behind.
	_, late := entry(t, "run-1", "d", exp)
	assert.ErrorIs(t, h.store.Put(ctx, []Entry{late}), ErrRevoked)
	_, err = h.store.Get(ctx, late.Key)
	assert.ErrorIs(t, err, ErrNotFound)
	_, more := entry(t, "run-2", "b", exp)
	assert.NoError(t, h.store.Put(ctx, []Entry{more}), "another run still mints")

	n, err = h.store.RevokeRun(ctx, "run-1", 2*time.Hour)
	require.NoError(t, err)
	assert.Zero(t, n, "revoking again")
	n, err = h.store.RevokeRun(ctx, "never-seen", 2*time.Hour)
	require.NoError(t, err)
	assert.Zero(t, n, "revoking a run without tokens")
}

// testRevokeUnderLoad resolves a run's tokens from many goroutines while the run is revoked:
// no lookup that starts after RevokeRun returned may find one.
func testRevokeUnderLoad(t *testing.T, h harness) {
	ctx := context.Background()
	exp := h.now().Add(time.Hour)
	var es []Entry
	for i := range 20 {
		_, e := entry(t, "run-load", fmt.Sprintf("s%d", i), exp)
		es = append(es, e)
	}
	require.NoError(t, h.store.Put(ctx, es))

	const readers, after = 8, 200 // each reader goes on for `after` lookups once revoked
	var revoked atomic.Bool
	var before, late atomic.Int64 // lookups that found a token before / after the revoke
	var wg sync.WaitGroup
	start := make(chan struct{})
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i, left := 0, after; left > 0 && i < 1_000_000; i++ {
				wasRevoked := revoked.Load()
				_, err := h.store.Get(ctx, es[(r+i)%len(es)].Key)
				switch {
				case err == nil && wasRevoked:
					late.Add(1)
				case err == nil:
					before.Add(1)
				case !errors.Is(err, ErrNotFound):
					t.Errorf("Get: %v", err)
					return
				}
				if wasRevoked {
					left--
				}
			}
		}()
	}
	close(start)
	// Let the readers find tokens first, bounded in count rather than time.
	for i := 0; before.Load() < readers && i < 1_000_000; i++ {
		if i%1000 == 999 {
			time.Sleep(time.Millisecond)
		}
	}
	n, err := h.store.RevokeRun(ctx, "run-load", 2*time.Hour)
	revoked.Store(true)
	require.NoError(t, err)
	wg.Wait()
	assert.Equal(t, len(es), n)
	assert.Positive(t, before.Load(), "the readers found tokens before the revoke")
	assert.Zero(t, late.Load(), "lookups that found a token after RevokeRun returned")
}

func testExpiry(t *testing.T, h harness) {
	ctx := context.Background()
	if h.clock != nil {
		_, e := entry(t, "run-exp", "docs", h.now().Add(time.Hour))
		_, keep := entry(t, "run-keep", "docs", h.now().Add(24*time.Hour))
		require.NoError(t, h.store.Put(ctx, []Entry{e}))
		require.NoError(t, h.store.Put(ctx, []Entry{keep}))
		h.clock.Advance(time.Hour - time.Second)
		_, err := h.store.Get(ctx, e.Key)
		require.NoError(t, err, "a second before expiry")
		h.clock.Advance(time.Second)
		_, err = h.store.Get(ctx, e.Key)
		assert.ErrorIs(t, err, ErrNotFound, "at expiry")

		// A Put after sweepEvery sweeps the expired token out of the store entirely.
		h.clock.Advance(sweepEvery)
		_, next := entry(t, "run-next", "docs", h.now().Add(time.Hour))
		require.NoError(t, h.store.Put(ctx, []Entry{next}))
		dump := h.dump(t)
		assert.NotContains(t, string(dump), e.Key.String(), "hex key of the expired token")
		assert.False(t, bytes.Contains(dump, e.Key[:]), "the expired token's key is still stored")
		_, err = h.store.Get(ctx, keep.Key)
		assert.NoError(t, err, "an unexpired token survives the sweep")
		return
	}
	// Real time (Redis): a short ttl, then poll until both the lookup and the key are gone.
	ttl := 1500 * time.Millisecond
	put := time.Now()
	_, e := entry(t, "run-exp", "docs", put.Add(ttl))
	require.NoError(t, h.store.Put(ctx, []Entry{e}))
	if _, err := h.store.Get(ctx, e.Key); err != nil {
		// Only a machine slower than the ttl may miss it, and then only once it expired.
		require.ErrorIs(t, err, ErrNotFound)
		require.False(t, time.Now().Before(put.Add(ttl)), "not found before its expiry")
	}
	gone := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, err := h.store.Get(ctx, e.Key)
		if errors.Is(err, ErrNotFound) && !bytes.Contains(h.dump(t), []byte(e.Key.String())) {
			gone = true
			break
		}
		require.True(t, err == nil || errors.Is(err, ErrNotFound), "Get: %v", err)
	}
	require.True(t, gone, "the token and its key were still there 30s after a %s ttl", ttl)
	assert.False(t, time.Now().Before(put.Add(ttl)), "gone before its expiry")
}

func testRevokeHoldEnds(t *testing.T, h harness) {
	ctx := context.Background()
	if h.clock != nil {
		_, err := h.store.RevokeRun(ctx, "run-h", time.Hour)
		require.NoError(t, err)
		_, e := entry(t, "run-h", "docs", h.now().Add(2*time.Hour))
		require.ErrorIs(t, h.store.Put(ctx, []Entry{e}), ErrRevoked)
		h.clock.Advance(time.Hour)
		require.NoError(t, h.store.Put(ctx, []Entry{e}), "once the hold ended")
		return
	}
	hold := 300 * time.Millisecond
	// The hold starts inside the call, on the store's clock; a durable Redis answers only after
	// its fsync, so the time is taken before the call.
	began := time.Now()
	_, err := h.store.RevokeRun(ctx, "run-h", hold)
	require.NoError(t, err)
	_, e := entry(t, "run-h", "docs", time.Now().Add(time.Hour))
	ok := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		err := h.store.Put(ctx, []Entry{e})
		if err == nil {
			ok = true
			break
		}
		require.ErrorIs(t, err, ErrRevoked)
	}
	require.True(t, ok, "the run was still refused 30s after a %s hold", hold)
	assert.GreaterOrEqual(t, time.Since(began), hold, "the hold ended early")
}

// testHashed: the plain token is nowhere in the store, only its SHA-256.
func testHashed(t *testing.T, h harness) {
	ctx := context.Background()
	value, e := entry(t, "run-hash", "docs", h.now().Add(time.Hour))
	require.NoError(t, h.store.Put(ctx, []Entry{e}))
	dump := h.dump(t)
	require.NotEmpty(t, dump)
	assert.NotContains(t, string(dump), value, "the plain token is stored")
	assert.NotContains(t, string(dump), value[len(Prefix):], "the token's random part is stored")
	assert.True(t, bytes.Contains(dump, e.Key[:]) || bytes.Contains(dump, []byte(e.Key.String())), "the token's hash is not what the store keys it by")
	if h.raw != nil {
		raw := h.raw(t)
		assert.NotContains(t, string(raw), value, "the plain token is in the store's file")
		assert.NotContains(t, string(raw), value[len(Prefix):], "the token's random part is in the store's file")
	}
}

// Two Redis stores on one database are two replicas: each resolves and revokes what the
// other stored.
func TestRedisReplicasShare(t *testing.T) {
	addr := testredis.Start(t)
	ctx := context.Background()
	open := func() *Redis {
		r, err := OpenRedis(ctx, "redis://"+addr+"/3", Options{})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	a, b := open(), open()
	_, e := entry(t, "run-r", "docs", time.Now().Add(time.Hour))
	require.NoError(t, a.Put(ctx, []Entry{e}))
	got, err := b.Get(ctx, e.Key)
	require.NoError(t, err)
	assert.Equal(t, "docs", got.Server)
	n, err := b.RevokeRun(ctx, "run-r", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = a.Get(ctx, e.Key)
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorIs(t, a.Put(ctx, []Entry{e}), ErrRevoked, "a replica mints for a run another revoked")

	// Another database of the same server shares nothing.
	other, err := OpenRedis(ctx, "redis://"+addr+"/4", Options{})
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.Put(ctx, []Entry{e}))
}

func TestRedisUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ln := freeLoopbackAddr(t)
	_, err := OpenRedis(ctx, "redis://"+ln+"/0", Options{})
	require.Error(t, err, "a store that does not answer fails at open, not at the first mint")
}

func freeLoopbackAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A file store keeps its tokens across a restart, and one process holds the file at a time.
func TestBoltReopen(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	path := filepath.Join(t.TempDir(), "tokens.db")
	s, err := OpenBolt(path, c.Now)
	require.NoError(t, err)
	_, e := entry(t, "run-b", "docs", c.Now().Add(time.Hour))
	require.NoError(t, s.Put(ctx, []Entry{e}))
	_, err = s.RevokeRun(ctx, "run-gone", time.Hour)
	require.NoError(t, err)

	_, err = OpenBolt(path, c.Now)
	require.ErrorContains(t, err, "another process holds the file")

	require.NoError(t, s.Close())
	s, err = OpenBolt(path, c.Now)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Get(ctx, e.Key)
	assert.NoError(t, err, "a token after a restart")
	_, g := entry(t, "run-gone", "docs", c.Now().Add(time.Hour))
	assert.ErrorIs(t, s.Put(ctx, []Entry{g}), ErrRevoked, "a revocation after a restart")
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []string{"", "memory"} {
		s, err := Open(ctx, spec, Options{})
		require.NoError(t, err)
		assert.IsType(t, &Memory{}, s)
		s.Close()
	}
	s, err := Open(ctx, "file:"+filepath.Join(t.TempDir(), "t.db"), Options{})
	require.NoError(t, err)
	assert.IsType(t, &Bolt{}, s)
	s.Close()
	for _, bad := range []string{"file:", "postgres://x", "mem", "redis://u:hunter2@[::1"} {
		_, err := Open(ctx, bad, Options{})
		require.Error(t, err, bad)
		assert.NotContains(t, err.Error(), "hunter2", "an error echoes a password")
	}
}
