package benchcycle

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy is a TCP proxy in front of PostgreSQL that counts round trips: per connection, a
// round trip begins each time the client sends bytes after the server has last spoken (or
// first, on a new connection) — the client had to wait for an answer before going on. A
// pipelined batch is one round trip, as it is on the wire; connection setup (startup and
// SCRAM authentication) counts its own round trips, and Connections says how many there were.
// The dev database speaks plain TCP (sslmode=disable), so the proxy sees every message.
type Proxy struct {
	ln     net.Listener
	target string

	roundTrips  atomic.Int64
	connections atomic.Int64
	wg          sync.WaitGroup
	// trace, when set, gets one line per round trip naming its statements (SetTrace).
	trace atomic.Pointer[tracer]
}

// SetTrace makes the proxy write one line per round trip to w, naming the statements the
// client sent in it; set it before the first connection.
func (p *Proxy) SetTrace(w io.Writer) { p.trace.Store(&tracer{w: w}) }

// Counts are a snapshot of a Proxy's counters.
type Counts struct{ RoundTrips, Connections int64 }

// Sub is c - o.
func (c Counts) Sub(o Counts) Counts {
	return Counts{c.RoundTrips - o.RoundTrips, c.Connections - o.Connections}
}

// NewProxy listens on a free port of 127.0.0.1 and forwards every connection to target.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Counts returns the counters so far.
func (p *Proxy) Counts() Counts {
	return Counts{p.roundTrips.Load(), p.connections.Load()}
}

// Close stops accepting; open connections end when either side closes.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	id := p.connections.Add(1)
	var ct *connTrace
	if t := p.trace.Load(); t != nil {
		ct = t.conn(id)
		defer ct.flush()
	}
	// serverSpoke is true when the server sent bytes after the client's last send.
	var serverSpoke atomic.Bool
	serverSpoke.Store(true)
	done := make(chan struct{}, 2)
	go func() {
		pump(server, client, func(b []byte) {
			newRT := serverSpoke.Swap(false)
			if newRT {
				p.roundTrips.Add(1)
			}
			if ct != nil {
				ct.feed(b, newRT)
			}
		})
		done <- struct{}{}
	}()
	go func() {
		pump(client, server, func([]byte) { serverSpoke.Store(true) })
		done <- struct{}{}
	}()
	<-done
}

// pump copies src to dst, calling seen before forwarding each read.
func pump(dst io.Writer, src io.Reader, seen func([]byte)) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			seen(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
