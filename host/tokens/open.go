package tokens

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Options are the settings of Open beside the store's name.
type Options struct {
	// Now is the clock of the stores that keep their own expiry (nil: time.Now).
	Now func() time.Time
	// AllowLostRevocations lets a Redis store be used whose persistence cannot keep a
	// revocation through a crash, or whose settings cannot be read (see OpenRedis).
	AllowLostRevocations bool
}

// Open opens the store a --token-store value names:
//
//	"" or "memory"            the in-process map (default; tokens are lost on exit)
//	file:PATH                 a bbolt file (one process; tokens survive a restart)
//	redis://host:port/db      Redis, shared by every replica (rediss:// for TLS)
//
// The caller closes the store.
func Open(ctx context.Context, spec string, o Options) (Store, error) {
	now := o.Now
	switch {
	case spec == "" || spec == "memory":
		return NewMemory(now), nil
	case strings.HasPrefix(spec, "file:"):
		path := strings.TrimPrefix(spec, "file:")
		if path == "" {
			return nil, fmt.Errorf("tokens: %q names no file (file:PATH)", spec)
		}
		return OpenBolt(path, now)
	case strings.HasPrefix(spec, "redis://"), strings.HasPrefix(spec, "rediss://"):
		return OpenRedis(ctx, spec, o)
	}
	// The value is not echoed: a mistyped redis URL may carry a password.
	return nil, fmt.Errorf("tokens: the store is not memory, file:PATH or redis://host:port/db")
}
