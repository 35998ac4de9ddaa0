// Package egresstest holds the fixtures of the tests that reach the egress guard (egress,
// delivery, web): a test server on 127.0.0.1 that counts the connections it accepts, and a
// resolver of the tests' names.
package egresstest

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
)

// Server is a test server on 127.0.0.1 that counts the connections made to it (Conns) and
// the requests it served (Hits).
type Server struct {
	*httptest.Server
	Conns atomic.Int32
	Hits  atomic.Int32
}

// NewTLSServer starts a TLS Server for t (its certificate names example.com).
func NewTLSServer(t testing.TB, h http.HandlerFunc) *Server { return start(t, h, true) }

// NewServer starts a plain-HTTP Server for t.
func NewServer(t testing.TB, h http.HandlerFunc) *Server { return start(t, h, false) }

func start(t testing.TB, h http.HandlerFunc, tls bool) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Hits.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.Conns.Add(1)
		}
	}
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's exact address, as STEWARD_EGRESS_ALLOW names one.
func (s *Server) Addr() netip.AddrPort { return netip.MustParseAddrPort(s.Listener.Addr().String()) }

// Lookup resolves the tests' names: example.com (the name on httptest's certificate) and
// names that rebind to refused addresses.
func Lookup(_ context.Context, host string) ([]netip.Addr, error) {
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
