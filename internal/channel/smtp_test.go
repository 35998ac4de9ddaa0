package channel_test

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// smtpServer is a small SMTP server for the tests, speaking the protocol net/smtp speaks:
// EHLO, STARTTLS (or implicit TLS), AUTH PLAIN, MAIL, RCPT, DATA, QUIT.
type smtpServer struct {
	ln       net.Listener
	implicit bool
	cert     tls.Certificate

	mu    sync.Mutex
	auth  []string // decoded AUTH PLAIN responses
	from  []string
	to    []string
	data  []string
	plain []string // commands received before TLS
}

func newSMTPServer(t *testing.T, cert tls.Certificate, implicit bool) *smtpServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{ln: ln, implicit: implicit, cert: cert}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *smtpServer) Addr() netip.AddrPort { return netip.MustParseAddrPort(s.ln.Addr().String()) }

func (s *smtpServer) serve(c net.Conn) {
	defer func() { c.Close() }()
	conf := &tls.Config{Certificates: []tls.Certificate{s.cert}}
	secure := false
	if s.implicit {
		c = tls.Server(c, conf)
		secure = true
	}
	r := bufio.NewReader(c)
	say := func(line string) { _, _ = c.Write([]byte(line + "\r\n")) }
	say("220 example.com ESMTP test")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		cmd := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		if !secure {
			s.mu.Lock()
			s.plain = append(s.plain, line)
			s.mu.Unlock()
		}
		switch cmd {
		case "EHLO", "HELO":
			if !secure {
				say("250-example.com")
				say("250 STARTTLS")
			} else {
				say("250-example.com")
				say("250 AUTH PLAIN")
			}
		case "STARTTLS":
			say("220 go ahead")
			c = tls.Server(c, conf)
			r = bufio.NewReader(c)
			secure = true
		case "AUTH":
			parts := strings.Fields(line)
			b, _ := base64.StdEncoding.DecodeString(parts[len(parts)-1])
			s.mu.Lock()
			s.auth = append(s.auth, string(b))
			s.mu.Unlock()
			say("235 ok")
		case "MAIL":
			s.mu.Lock()
			s.from = append(s.from, line)
			s.mu.Unlock()
			say("250 ok")
		case "RCPT":
			s.mu.Lock()
			s.to = append(s.to, line)
			s.mu.Unlock()
			say("250 ok")
		case "DATA":
			say("354 go")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			s.mu.Lock()
			s.data = append(s.data, b.String())
			s.mu.Unlock()
			say("250 queued")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("502 unknown")
		}
	}
}
