package testdb

import (
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/benchcycle"
)

// Counted returns rawURL through a TCP proxy that counts its round trips to PostgreSQL
// (benchcycle.Proxy, the one make bench-cycle reads), closed with the test, and the proxy's
// trace: a line per round trip naming its statements.
func Counted(t testing.TB, rawURL string) (string, *benchcycle.Proxy, *Buffer) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := benchcycle.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	trace := &Buffer{}
	p.SetTrace(trace)
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	return u.String(), p, trace
}

// Buffer is text written from other goroutines (a proxy's connections, a server's output)
// and read by the test.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
