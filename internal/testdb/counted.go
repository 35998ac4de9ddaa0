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
func Counted(t testing.TB, rawURL string) (string, *benchcycle.Proxy, *Trace) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := benchcycle.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	trace := &Trace{}
	p.SetTrace(trace)
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	return u.String(), p, trace
}

// Trace is a proxy's trace, written from its connections' goroutines.
type Trace struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Trace) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Trace) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
