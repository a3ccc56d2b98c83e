package tokens

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buckets of the bbolt store. tokens: key (32 bytes) → JSON Record. runs: run, NUL, key →
// nothing (the index RevokeRun walks). revoked: run → end of its refusal (8-byte big-endian
// Unix nanoseconds).
var (
	bucketTokens  = []byte("tokens")
	bucketRuns    = []byte("runs")
	bucketRevoked = []byte("revoked")
)

// Bolt is the file Store: a bbolt database, so tokens survive a restart of serve. bbolt
// locks the file, so one process at a time uses it: replicas share tokens through Redis.
// Expired entries are never returned and are swept on a Put at most once a minute.
type Bolt struct {
	db  *bolt.DB
	now func() time.Time

	sweepMu   sync.Mutex
	lastSweep time.Time
}

// OpenBolt opens (creating it with mode 0600) the bbolt file at path, on clock now (nil:
// time.Now). It fails after a second when another process holds the file.
func OpenBolt(path string, now func() time.Time) (*Bolt, error) {
	if now == nil {
		now = time.Now
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("tokens: open %s: another process holds the file (a file store serves one process; replicas share a redis:// store)", path)
		}
		return nil, fmt.Errorf("tokens: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketTokens, bucketRuns, bucketRevoked} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("tokens: open %s: %w", path, err)
	}
	return &Bolt{db: db, now: now}, nil
}

func runKey(run string, key Key) []byte {
	b := make([]byte, 0, len(run)+1+len(key))
	b = append(b, run...)
	b = append(b, 0)
	return append(b, key[:]...)
}

func nanos(t time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano())) }

func fromNanos(b []byte) time.Time {
	if len(b) != 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)))
}

// Put implements Store.
func (s *Bolt) Put(_ context.Context, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	run := entries[0].Record.Run
	vals := make([][]byte, len(entries))
	for i, e := range entries {
		if e.Record.Run != run {
			return errors.New("tokens: one Put stores the tokens of one run")
		}
		b, err := json.Marshal(e.Record)
		if err != nil {
			return err
		}
		vals[i] = b
	}
	now := s.now()
	s.sweepMu.Lock()
	sweep := now.Sub(s.lastSweep) >= sweepEvery
	if sweep {
		s.lastSweep = now
	}
	s.sweepMu.Unlock()
	// Batch commits the Puts of concurrent renders in one transaction, one fsync: each alone
	// would hold its render slot through a commit of its own. A Put that fails (a revoked run)
	// is run again alone, so it fails alone; the function may run twice and is idempotent.
	return s.db.Batch(func(tx *bolt.Tx) error {
		if sweep {
			if err := boltSweep(tx, now); err != nil {
				return err
			}
		}
		if until := fromNanos(tx.Bucket(bucketRevoked).Get([]byte(run))); now.Before(until) {
			return ErrRevoked
		}
		toks, runs := tx.Bucket(bucketTokens), tx.Bucket(bucketRuns)
		for i, e := range entries {
			if err := toks.Put(e.Key[:], vals[i]); err != nil {
				return err
			}
			if err := runs.Put(runKey(run, e.Key), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// boltSweep deletes expired tokens (and their index entries) and ended revocations.
func boltSweep(tx *bolt.Tx, now time.Time) error {
	toks, runs, revoked := tx.Bucket(bucketTokens), tx.Bucket(bucketRuns), tx.Bucket(bucketRevoked)
	c := toks.Cursor()
	for k, v := c.First(); k != nil; {
		var r Record
		if json.Unmarshal(v, &r) == nil && now.Before(r.Expires) {
			k, v = c.Next()
			continue
		}
		var key Key
		copy(key[:], k)
		k = append([]byte(nil), k...)
		if err := c.Delete(); err != nil {
			return err
		}
		if r.Run != "" {
			if err := runs.Delete(runKey(r.Run, key)); err != nil {
				return err
			}
		}
		k, v = c.Seek(k) // Delete moves the cursor; Seek lands on the next key
	}
	rc := revoked.Cursor()
	for k, v := rc.First(); k != nil; {
		if now.Before(fromNanos(v)) {
			k, v = rc.Next()
			continue
		}
		k = append([]byte(nil), k...)
		if err := rc.Delete(); err != nil {
			return err
		}
		k, v = rc.Seek(k)
	}
	return nil
}

// Get implements Store.
func (s *Bolt) Get(_ context.Context, key Key) (Record, error) {
	var r Record
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketTokens).Get(key[:])
		if v == nil {
			return nil
		}
		found = true
		return json.Unmarshal(v, &r)
	})
	if err != nil {
		return Record{}, fmt.Errorf("tokens: read: %w", err)
	}
	if !found || !s.now().Before(r.Expires) {
		return Record{}, ErrNotFound
	}
	return r, nil
}

// RevokeRun implements Store.
func (s *Bolt) RevokeRun(_ context.Context, run string, hold time.Duration) (int, error) {
	now := s.now()
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		n = 0
		toks, runs, revoked := tx.Bucket(bucketTokens), tx.Bucket(bucketRuns), tx.Bucket(bucketRevoked)
		prefix := append([]byte(run), 0)
		c := runs.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			tk := k[len(prefix):]
			if v := toks.Get(tk); v != nil {
				var r Record
				if json.Unmarshal(v, &r) == nil && now.Before(r.Expires) {
					n++
				}
				if err := toks.Delete(tk); err != nil {
					return err
				}
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		until := now.Add(hold)
		if prev := fromNanos(revoked.Get([]byte(run))); prev.After(until) {
			until = prev
		}
		return revoked.Put([]byte(run), nanos(until))
	})
	if err != nil {
		return 0, fmt.Errorf("tokens: revoke: %w", err)
	}
	return n, nil
}

// Close implements Store.
func (s *Bolt) Close() error { return s.db.Close() }
