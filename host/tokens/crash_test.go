package tokens

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/loadout-dev/loadout/internal/testredis"
)

// TestRedisCrashLosesRevocations kills Redis with SIGKILL right after a revoke and starts it
// again on its files, under each persistence setting, and shows both what the store does at
// open (refuses every setting but AOF with appendfsync always) and what a crash does to the
// revocation when the refusal is overridden: without persistence the revoked run is minted new
// tokens; with snapshots the token revoked after the last one resolves again; the append-only
// file keeps it (everysec only through a crash of the process, which is what this shows, not of
// the machine: it is refused too).
func TestRedisCrashLosesRevocations(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		refused bool
		// snapshot: the token is snapshotted (SAVE) before the revoke
		snapshot bool
		// after the crash: whether the revoked token resolves, and whether the run can mint
		resolves, mints bool
	}{
		{name: "no persistence", args: []string{"--save", "", "--appendonly", "no"}, refused: true, resolves: false, mints: true},
		{name: "snapshots", args: []string{"--save", "3600 1", "--appendonly", "no"}, refused: true, snapshot: true, resolves: true, mints: true},
		{name: "aof everysec", args: []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}, refused: true},
		{name: "aof always", args: testredis.Durable},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := testredis.StartServer(t, tc.args...)
			url := "redis://" + srv.Addr + "/0"
			strict, err := OpenRedis(ctx, url, Options{})
			if tc.refused {
				require.ErrorIs(t, err, ErrLostRevocations, "open without allowing lost revocations")
				assert.Contains(t, err.Error(), "appendfsync always", "the refusal says what Redis needs")
				assert.Contains(t, err.Error(), "--token-store-allow-lost-revocations", "the refusal names the override")
			} else {
				require.NoError(t, err, "open a Redis that keeps every write")
				strict.Close()
			}

			r, err := OpenRedis(ctx, url, Options{AllowLostRevocations: true})
			require.NoError(t, err)
			_, e := entry(t, "run-c", "docs", time.Now().Add(time.Hour))
			require.NoError(t, r.Put(ctx, []Entry{e}))
			if tc.snapshot {
				require.NoError(t, r.c.Save(ctx).Err(), "snapshot the live token")
			}
			n, err := r.RevokeRun(ctx, "run-c", time.Hour)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			r.Close()

			srv.Restart() // SIGKILL, then start again on the same files

			r, err = OpenRedis(ctx, url, Options{AllowLostRevocations: true})
			require.NoError(t, err)
			defer r.Close()
			_, err = r.Get(ctx, e.Key)
			if tc.resolves {
				assert.NoError(t, err, "the revoked token resolves again after the crash")
			} else {
				assert.ErrorIs(t, err, ErrNotFound, "the revoked token after the crash")
			}
			_, e2 := entry(t, "run-c", "fs", time.Now().Add(time.Hour))
			err = r.Put(ctx, []Entry{e2})
			if tc.mints {
				assert.NoError(t, err, "the revoked run mints again after the crash")
			} else {
				assert.ErrorIs(t, err, ErrRevoked, "the revoked run mints after the crash")
			}
		})
	}
}

// TestRedisPersistenceCheckedOnReconnect: a store opened on a durable Redis checks again on
// every new connection, so a Redis that comes back with weaker settings answers no call.
func TestRedisPersistenceCheckedOnReconnect(t *testing.T) {
	ctx := context.Background()
	srv := testredis.StartServer(t, testredis.Durable...)
	r, err := OpenRedis(ctx, "redis://"+srv.Addr+"/0", Options{})
	require.NoError(t, err)
	defer r.Close()
	_, e := entry(t, "run-d", "docs", time.Now().Add(time.Hour))
	require.NoError(t, r.Put(ctx, []Entry{e}))

	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	require.NoError(t, admin.ConfigSet(ctx, "appendfsync", "everysec").Err())
	require.NoError(t, admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(), "drop the store's connections")
	_, err = r.Get(ctx, e.Key)
	require.ErrorIs(t, err, ErrLostRevocations, "a call on a new connection to a Redis that now loses writes")

	require.NoError(t, admin.ConfigSet(ctx, "appendfsync", "always").Err())
	_, err = r.Get(ctx, e.Key)
	assert.NoError(t, err, "a call once Redis keeps every write again")
}

// TestRedisConfigDisabled: an operator who renamed CONFIG away gets a refusal saying so,
// unless lost revocations are allowed.
func TestRedisConfigDisabled(t *testing.T) {
	ctx := context.Background()
	srv := testredis.StartServer(t, append([]string{"--rename-command", "CONFIG", ""}, testredis.Durable...)...)
	_, err := OpenRedis(ctx, "redis://"+srv.Addr+"/0", Options{})
	require.ErrorIs(t, err, ErrLostRevocations)
	assert.Contains(t, err.Error(), "CONFIG GET", "the refusal says what could not be read")
	r, err := OpenRedis(ctx, "redis://"+srv.Addr+"/0", Options{AllowLostRevocations: true})
	require.NoError(t, err, "allowed")
	r.Close()
}
