package tokens

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Open opens the store a --token-store value names:
//
//	"" or "memory"            the in-process map (default; tokens are lost on exit)
//	file:PATH                 a bbolt file (one process; tokens survive a restart)
//	redis://host:port/db      Redis, shared by every replica (rediss:// for TLS)
//
// now is the clock of the stores that keep their own expiry (nil: time.Now). The caller
// closes the store.
func Open(ctx context.Context, spec string, now func() time.Time) (Store, error) {
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
		return OpenRedis(ctx, spec, now)
	}
	// The value is not echoed: a mistyped redis URL may carry a password.
	return nil, fmt.Errorf("tokens: the store is not memory, file:PATH or redis://host:port/db")
}
