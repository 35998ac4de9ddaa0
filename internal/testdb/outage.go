package testdb

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Outage is a TCP proxy in front of the test's PostgreSQL that a test can take down and bring
// back, as a database stopped for maintenance or failing over is seen from Steward: while it
// is down, every connection through it is cut and new ones are refused. (The dev server itself
// is shared by every test package running at once, so tests stop this instead.)
type Outage struct {
	t      testing.TB
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	// loseCommit, when set, makes the next COMMIT's answer never arrive (LoseNextCommit);
	// dropCommit the next COMMIT never reach the server (DropNextCommit).
	loseCommit, dropCommit atomic.Bool
}

// DropNextCommit makes the next transaction to commit through the proxy never commit while
// its client cannot know it: the connection is cut as the client's COMMIT passes (the chunk
// carrying it, and the statements sent with it, dropped) — a backend killed just before it
// read the COMMIT, as a failover does.
func (o *Outage) DropNextCommit() { o.dropCommit.Store(true) }

// LoseNextCommit makes the next transaction to commit through the proxy commit on the
// server while its answer is lost: the connection is cut as the server's CommandComplete
// "COMMIT" passes, before the client reads it — the one moment at which a failover leaves a
// client unable to know whether its transaction committed.
func (o *Outage) LoseNextCommit() { o.loseCommit.Store(true) }

// NewOutage starts a proxy to the server of dbURL (a postgres:// URL), up, closed when t ends.
func NewOutage(t testing.TB, dbURL string) *Outage {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("outage: %v", err)
	}
	o := &Outage{t: t, target: u.Host, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	o.Up()
	t.Cleanup(o.Down)
	return o
}

// Through is dbURL connecting through the proxy.
func (o *Outage) Through(dbURL string) string {
	o.t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		o.t.Fatalf("outage: %v", err)
	}
	u.Host = o.addr
	return u.String()
}

// Up listens again on the proxy's address.
func (o *Outage) Up() {
	o.t.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		o.t.Fatalf("outage: listen: %v", err)
	}
	o.mu.Lock()
	o.ln, o.addr = ln, ln.Addr().String()
	o.mu.Unlock()
	go o.accept(ln)
}

// Down cuts every connection through the proxy and refuses new ones.
func (o *Outage) Down() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ln != nil {
		o.ln.Close()
		o.ln = nil
	}
	for c := range o.conns {
		c.Close()
	}
	clear(o.conns)
}

func (o *Outage) accept(ln net.Listener) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", o.target)
		if err != nil {
			client.Close()
			continue
		}
		o.mu.Lock()
		if o.ln != ln { // went down meanwhile
			o.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		o.conns[client], o.conns[server] = true, true
		o.mu.Unlock()
		go o.answers(client, server)
		go o.requests(server, client)
	}
}

// answers copies the server's messages to the client, as pipe, but when LoseNextCommit was
// called, cuts both as soon as a chunk carries a CommandComplete "COMMIT", which it drops.
func (o *Outage) answers(client, server net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if bytes.Contains(buf[:n], []byte("COMMIT\x00")) && o.loseCommit.CompareAndSwap(true, false) {
				return
			}
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// requests copies the client's messages to the server, as pipe, but when DropNextCommit was
// called, cuts both as soon as a chunk carries a COMMIT, which it drops.
func (o *Outage) requests(server, client net.Conn) {
	defer client.Close()
	defer server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if bytes.Contains(bytes.ToLower(buf[:n]), []byte("commit")) && o.dropCommit.CompareAndSwap(true, false) {
				return
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
