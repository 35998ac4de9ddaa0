package delivery_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stewardhq/steward/internal/egress"
)

// server is a TLS test server on 127.0.0.1 that counts the connections made to it.
type server struct {
	*httptest.Server
	conns atomic.Int32
	hits  atomic.Int32
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *server) addr(t *testing.T) netip.AddrPort {
	t.Helper()
	return netip.MustParseAddrPort(s.Listener.Addr().String())
}

func (s *server) port(t *testing.T) uint16 { return s.addr(t).Port() }

// testLookup resolves the test's names: example.com (the name on httptest's certificate) and
// names that rebind to refused addresses.
func testLookup(_ context.Context, host string) ([]netip.Addr, error) {
	m := map[string]string{
		"example.com":      "127.0.0.1",
		"rebind.example":   "127.0.0.1",
		"metadata.example": "169.254.169.254",
		"mapped.example":   "::ffff:127.0.0.1",
		"private.example":  "10.0.0.1",
		"dual.example":     "93.184.215.14,127.0.0.1",
		"cgnat.example":    "100.64.0.1",
	}
	v, ok := m[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	var out []netip.Addr
	for _, s := range strings.Split(v, ",") {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// guardFor is the production guard plus the test's only allowance: the exact address of
// allowed (nil: nothing allowed).
func guardFor(allowed *server, t *testing.T) *egress.Guard {
	opts := egress.Options{Lookup: testLookup}
	if allowed != nil {
		opts.Allow = []netip.AddrPort{allowed.addr(t)}
		opts.RootCAs = allowed.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	}
	return egress.NewGuard(opts)
}
