// Package mail speaks to an owner's mail account on the open standards every provider has:
// IMAP (github.com/emersion/go-imap/v2) to search, read, move and flag, SMTP
// (github.com/emersion/go-smtp, go-sasl) to send, and MIME (github.com/emersion/go-message)
// to read and write messages. Every connection goes through the egress guard
// (internal/egress, docs/ARCHITECTURE.md §8) and TLS — implicit (imaps://, smtps://) or
// STARTTLS (imap://, smtp://) — unless the server's address is one of STEWARD_EGRESS_ALLOW's;
// every step runs under the client's timeout. What a message says is a stranger's: HTML
// bodies become text through internal/doctext's sandboxed reader, and every size read is
// capped (docs/MAIL.md).
package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/steward"
)

// Account is what a connection needs: the servers, the login and the sender address.
type Account struct {
	IMAPURL  string `json:"imap_url"`
	SMTPURL  string `json:"smtp_url"`
	Username string `json:"username"`
	Password string `json:"-"`
	From     string `json:"from"`
	// OAuth names the provider whose grant logs in (internal/oauth), "" for a password; SASL
	// is its mechanism (xoauth2 or oauthbearer) and Token the access token of the moment.
	OAuth string `json:"oauth,omitempty"`
	SASL  string `json:"sasl,omitempty"`
	Token string `json:"-"`
}

// Ports a mail server may listen on (the guard refuses others unless STEWARD_EGRESS_ALLOW
// names the exact address).
var Ports = []uint16{25, 143, 465, 587, 993}

// DefaultTimeout bounds one operation (connect, log in, and the commands), whole.
const DefaultTimeout = 30 * time.Second

// Client reaches mail servers through its guard.
type Client struct {
	// Guard checks and dials every connection; its Ports should be Ports.
	Guard *egress.Guard
	// Timeout bounds each operation; zero means DefaultTimeout.
	Timeout time.Duration
	// RootCAs trusts extra certificate authorities (a test's); nil means the system's.
	RootCAs *x509.CertPool
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// endpoint is a parsed server URL: host, port and whether TLS starts at once.
type endpoint struct {
	host     string
	port     int
	implicit bool
	scheme   string
}

func (e endpoint) addr() string { return net.JoinHostPort(e.host, strconv.Itoa(e.port)) }

// ParseURL reads an imap://, imaps://, smtp:// or smtps:// URL (kind "imap" or "smtp"), with
// the protocol's port when none is given.
func ParseURL(raw, kind string) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return endpoint{}, fmt.Errorf("%q is not a URL such as %s://mail.example.com", raw, kind+"s")
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return endpoint{}, fmt.Errorf("the %s URL is a scheme, a host and a port only (the login goes in username and password)", kind)
	}
	e := endpoint{host: u.Hostname(), scheme: strings.ToLower(u.Scheme)}
	defaults := map[string]int{"imap": 143, "imaps": 993, "smtp": 587, "smtps": 465}
	switch e.scheme {
	case kind:
	case kind + "s":
		e.implicit = true
	default:
		return endpoint{}, fmt.Errorf("the %s URL must start with %s:// (implicit TLS) or %s:// (STARTTLS)", kind, kind+"s", kind)
	}
	e.port = defaults[e.scheme]
	if p := u.Port(); p != "" {
		if e.port, err = strconv.Atoi(p); err != nil || e.port < 1 || e.port > 65535 {
			return endpoint{}, fmt.Errorf("the port of %q is not a port", raw)
		}
	}
	return e, nil
}

// Check validates an account's URLs and destinations against the guard without logging in:
// a private address not in STEWARD_EGRESS_ALLOW, or a host that does not resolve, is refused.
func (c *Client) Check(ctx context.Context, a Account) error {
	for _, u := range []struct{ raw, kind string }{{a.IMAPURL, "imap"}, {a.SMTPURL, "smtp"}} {
		e, err := ParseURL(u.raw, u.kind)
		if err != nil {
			return steward.Errorf(steward.CodeInvalid, "%s", err.Error())
		}
		if _, err := c.Guard.CheckDestination(ctx, "https://"+e.addr()); err != nil {
			return steward.Errorf(steward.CodeInvalid, "the %s server %s is refused: %s", strings.ToUpper(u.kind), e.host, reason(err))
		}
	}
	return nil
}

// dial connects to e through the guard, closes the connection when ctx ends (so no step
// outlives the timeout), and starts implicit TLS. plain reports that the connection is not
// encrypted yet, and whether that may stay so (an exempt address).
func (c *Client) dial(ctx context.Context, e endpoint, kind string) (conn net.Conn, exempt bool, stop func(), err error) {
	raw, err := c.Guard.Dial(ctx, e.addr())
	if err != nil {
		return nil, false, nil, c.failure(ctx, kind, e, "cannot connect", err)
	}
	stopAfter := context.AfterFunc(ctx, func() { raw.Close() })
	stop = func() { stopAfter(); raw.Close() }
	exempt = c.Guard.Exempt(ctx, e.addr())
	if !e.implicit {
		return raw, exempt, stop, nil
	}
	tc := tls.Client(raw, c.tlsConfig(e))
	if err := tc.HandshakeContext(ctx); err != nil {
		stop()
		return nil, false, nil, c.failure(ctx, kind, e, "TLS failed", err)
	}
	return tc, exempt, stop, nil
}

func (c *Client) tlsConfig(e endpoint) *tls.Config {
	return &tls.Config{ServerName: e.host, MinVersion: tls.VersionTLS12, RootCAs: c.RootCAs}
}

// failure is an error in the owner's words for a step with a server: refused by the guard,
// out of time, or what the server or network said.
func (c *Client) failure(ctx context.Context, kind string, e endpoint, what string, err error) error {
	server := fmt.Sprintf("the %s server %s", kind, e.addr())
	switch {
	case errors.Is(err, egress.ErrBlocked):
		return steward.Errorf(steward.CodeInvalid, "%s is refused: %s", server, reason(err))
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return steward.Errorf(steward.CodeInvalid, "%s did not answer within %s (%s)", server, c.timeout(), what)
	}
	return steward.Errorf(steward.CodeInvalid, "%s: %s: %v", server, what, err)
}

// reason is a guard's refusal without its sentinel's words.
func reason(err error) string {
	return strings.TrimPrefix(err.Error(), egress.ErrBlocked.Error()+": ")
}
