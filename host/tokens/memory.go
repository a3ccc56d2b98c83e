package tokens

import (
	"context"
	"errors"
	"sync"
	"time"
)

// sweepEvery is how often a store that keeps its own expiry (memory, bbolt) drops expired
// tokens and revocations, on the next Put after it passed.
const sweepEvery = time.Minute

// Memory is the in-process Store: tokens live in maps and are lost when the process exits.
// Expired entries are never returned and are swept on a Put at most once a minute.
type Memory struct {
	now func() time.Time

	mu        sync.RWMutex
	toks      map[Key]Record
	runs      map[string]map[Key]struct{}
	revoked   map[string]time.Time // run -> end of its refusal
	lastSweep time.Time
}

// NewMemory returns an empty in-process store on clock now (nil: time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, toks: map[Key]Record{}, runs: map[string]map[Key]struct{}{}, revoked: map[string]time.Time{}}
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	run := entries[0].Record.Run
	for _, e := range entries {
		if e.Record.Run != run {
			return errors.New("tokens: one Put stores the tokens of one run")
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if now.Sub(m.lastSweep) >= sweepEvery {
		m.sweep(now)
	}
	if until, ok := m.revoked[run]; ok && now.Before(until) {
		return ErrRevoked
	}
	set := m.runs[run]
	if set == nil {
		set = map[Key]struct{}{}
		m.runs[run] = set
	}
	for _, e := range entries {
		m.toks[e.Key] = e.Record
		set[e.Key] = struct{}{}
	}
	return nil
}

func (m *Memory) sweep(now time.Time) {
	m.lastSweep = now
	for k, r := range m.toks {
		if !now.Before(r.Expires) {
			delete(m.toks, k)
			if set := m.runs[r.Run]; set != nil {
				delete(set, k)
				if len(set) == 0 {
					delete(m.runs, r.Run)
				}
			}
		}
	}
	for run, until := range m.revoked {
		if !now.Before(until) {
			delete(m.revoked, run)
		}
	}
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key Key) (Record, error) {
	m.mu.RLock()
	r, ok := m.toks[key]
	m.mu.RUnlock()
	if !ok || !m.now().Before(r.Expires) {
		return Record{}, ErrNotFound
	}
	return r, nil
}

// RevokeRun implements Store.
func (m *Memory) RevokeRun(_ context.Context, run string, hold time.Duration) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n := 0
	for k := range m.runs[run] {
		if r, ok := m.toks[k]; ok && now.Before(r.Expires) {
			n++
		}
		delete(m.toks, k)
	}
	delete(m.runs, run)
	if until := now.Add(hold); until.After(m.revoked[run]) {
		m.revoked[run] = until
	}
	return n, nil
}

// Close implements Store; the maps are dropped.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.toks)
	clear(m.runs)
	clear(m.revoked)
	return nil
}
