package benchcycle

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
)

// tracer writes, per round trip, the statements the client sent in it (sqlc's query names,
// else the SQL's first words): the breakdown behind the round-trip count. It parses the
// frontend protocol: Query, Parse (statement name → SQL) and Bind (which statement runs).
type tracer struct {
	mu sync.Mutex
	w  io.Writer
}

type connTrace struct {
	t       *tracer
	id      int64
	started bool // the untyped startup message was seen
	buf     []byte
	stmts   map[string]string
	flight  []string
}

func (t *tracer) conn(id int64) *connTrace {
	return &connTrace{t: t, id: id, stmts: map[string]string{}}
}

func label(sql string) string {
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		name, _, _ := strings.Cut(rest, " ")
		return name
	}
	f := strings.Fields(sql)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

// feed parses client bytes; newRT says a round trip begins with them.
func (c *connTrace) feed(b []byte, newRT bool) {
	if newRT {
		c.flush()
	}
	c.buf = append(c.buf, b...)
	for {
		if !c.started {
			if len(c.buf) < 4 {
				return
			}
			n := int(binary.BigEndian.Uint32(c.buf))
			if len(c.buf) < n {
				return
			}
			c.buf = c.buf[n:]
			c.started = true
			c.flight = append(c.flight, "startup")
			continue
		}
		if len(c.buf) < 5 {
			return
		}
		typ := c.buf[0]
		n := int(binary.BigEndian.Uint32(c.buf[1:]))
		if len(c.buf) < 1+n {
			return
		}
		body := c.buf[5 : 1+n]
		cstr := func(b []byte) (string, []byte) {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				return string(b), nil
			}
			return string(b[:i]), b[i+1:]
		}
		switch typ {
		case 'Q':
			q, _ := cstr(body)
			c.flight = append(c.flight, "Q:"+label(q))
		case 'P':
			name, rest := cstr(body)
			q, _ := cstr(rest)
			c.stmts[name] = label(q)
			if name == "" {
				c.flight = append(c.flight, "P:"+label(q))
			} else {
				c.flight = append(c.flight, "prepare "+label(q))
			}
		case 'B':
			_, rest := cstr(body)
			stmt, _ := cstr(rest)
			if stmt != "" {
				c.flight = append(c.flight, c.stmts[stmt])
			}
		case 'p':
			c.flight = append(c.flight, "auth")
		case 'H':
			c.flight = append(c.flight, "flush")
		case 'X':
			c.flight = append(c.flight, "terminate")
		}
		c.buf = c.buf[1+n:]
	}
}

func (c *connTrace) flush() {
	if len(c.flight) == 0 {
		return
	}
	c.t.mu.Lock()
	fmt.Fprintf(c.t.w, "c%d: %s\n", c.id, strings.Join(c.flight, ", "))
	c.t.mu.Unlock()
	c.flight = c.flight[:0]
}
