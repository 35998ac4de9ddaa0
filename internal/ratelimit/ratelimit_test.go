package ratelimit_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/ratelimit"
)

func TestLimiterCountsPerKeyInItsOwnWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	l := &ratelimit.Limiter{Max: 3, Window: time.Minute, Now: func() time.Time { return now }}
	for i := range 3 {
		if d := l.Add("a"); d != 0 {
			t.Fatalf("attempt %d of a: wait %s; want none", i+1, d)
		}
	}
	if d := l.Wait("a"); d != time.Minute {
		t.Fatalf("Wait(a) after 3 of 3 = %s; want a minute", d)
	}
	now = now.Add(20 * time.Second)
	if d := l.Add("a"); d != 40*time.Second {
		t.Fatalf("4th attempt of a = wait %s; want 40s, the rest of its window", d)
	}
	if d := l.Add("b"); d != 0 || l.Wait("b") != 0 {
		t.Fatalf("b is slowed down by a's attempts")
	}
	now = now.Add(40 * time.Second)
	if d := l.Add("a"); d != 0 {
		t.Fatalf("a after its window = wait %s; want none", d)
	}
}

// A flood of fresh keys cannot grow the table past MaxKeys, nor block a key: the table's
// live keys keep their counts, keys beyond it are not counted, and passed windows make room.
func TestLimiterMemoryIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	l := &ratelimit.Limiter{Max: 1, Window: time.Minute, MaxKeys: 100, Now: func() time.Time { return now }}
	l.Add("hammered")
	for i := range 10000 {
		l.Add(fmt.Sprint("junk", i))
	}
	if l.Add("hammered") == 0 {
		t.Fatal("a tracked key lost its count to a flood of fresh keys")
	}
	for range 2 {
		if l.Add("newcomer") != 0 {
			t.Fatal("a key arriving at a full table was refused; want it allowed, uncounted")
		}
	}
	now = now.Add(time.Minute)
	l.Add("newcomer")
	if l.Add("newcomer") == 0 {
		t.Fatal("once the flood's windows passed, a new key is still not counted")
	}
}

func TestClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, remote, header, value, want string
	}{
		{"serve: the TCP peer", "203.0.113.7:51234", "", "", "203.0.113.7"},
		{"a header nobody trusts is ignored", "203.0.113.7:51234", "", "198.51.100.1", "203.0.113.7"},
		{"Lambda: the source IP, no port", "198.51.100.2", "", "", "198.51.100.2"},
		{"behind the proxy: its entry", "10.0.0.2:443", "X-Forwarded-For", "198.51.100.3", "198.51.100.3"},
		{"behind the proxy: the right-most entry, not the client's own", "10.0.0.2:443", "X-Forwarded-For", "1.2.3.4, 198.51.100.3", "198.51.100.3"},
		{"behind the proxy: an entry with a port", "10.0.0.2:443", "X-Forwarded-For", "[2001:db8::1]:443", "2001:db8::/64"},
		{"behind the proxy: no header (the proxy bypassed)", "10.0.0.2:443", "X-Forwarded-For", "", "10.0.0.2"},
		{"behind the proxy: junk in the header", "10.0.0.2:443", "X-Forwarded-For", "1.2.3.4, junk", "10.0.0.2"},
		{"an IPv6 client by its /64", "[2001:db8:1:2:3:4:5:6]:8080", "", "", "2001:db8:1:2::/64"},
		{"an IPv4-mapped address as IPv4", "[::ffff:192.0.2.1]:8080", "", "", "192.0.2.1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.value != "" {
			r.Header.Set("X-Forwarded-For", tc.value)
		}
		if got := ratelimit.Client(r, tc.header); got != tc.want {
			t.Errorf("%s: Client = %q; want %q", tc.name, got, tc.want)
		}
	}
}
