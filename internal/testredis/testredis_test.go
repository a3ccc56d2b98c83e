package testredis

import (
	"strings"
	"testing"
)

func TestMissing(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "LOADOUT_REQUIRE_ALL" {
				return v
			}
			return ""
		}
	}
	msg, fail := missing(env(""))
	if fail || !strings.Contains(msg, "redis-server") {
		t.Errorf("without LOADOUT_REQUIRE_ALL: %q, fail %v; want a skip naming the package", msg, fail)
	}
	if _, fail := missing(env("1")); !fail {
		t.Error("LOADOUT_REQUIRE_ALL=1 skips instead of failing")
	}
}

func TestStart(t *testing.T) {
	addr := Start(t)
	if err := ping(addr); err != nil {
		t.Fatalf("ping %s: %v", addr, err)
	}
}
