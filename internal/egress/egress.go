// Package egress is Steward's one way out to URLs an owner or a model chose: notification
// delivery (internal/delivery) and the web tools (internal/web) both get their HTTP client
// here. Its dial-time SSRF guard never lets such a URL reach Steward's own network,
// loopback, link-local or cloud metadata addresses (docs/ARCHITECTURE.md §6).
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrBlocked is returned (wrapped) for every destination the guard refuses.
var ErrBlocked = errors.New("destination refused by the SSRF guard")

// Options configure a guard. The zero value is the strictest: https on port 443 only, no
// private address reachable.
type Options struct {
	// AllowHTTP permits http:// URLs on port 80 besides https on 443 (web_fetch; delivery
	// stays https only).
	AllowHTTP bool
	// Allow lists exact addresses (IP and port) that may be dialled although the guard would
	// refuse them — an intranet server, a test receiver on 127.0.0.1 — from the operator's
	// STEWARD_EGRESS_ALLOW. Nothing else on that IP is reachable.
	Allow []netip.AddrPort
	// Timeout bounds a whole request, redirects and body included; zero means 30 seconds.
	Timeout time.Duration
	// MaxRedirects is how many redirects a request follows, each re-checked; zero means 5.
	MaxRedirects int
	// Lookup resolves a host name; nil means the system resolver. Tests map names to
	// addresses with it.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// RootCAs trusts extra certificate authorities (a test server's); nil means the system's.
	RootCAs *x509.CertPool
	// Ports replaces the ports a destination may have (443, and 80 with AllowHTTP): the
	// email channel's guard allows SMTP's 25, 465 and 587 instead.
	Ports []uint16
}

// Guard checks every destination of an outgoing request: the URL before anything happens
// (scheme, host, literal and non-canonical IP forms), every address a host name resolves
// to, and — in the dialer's Control hook — the address actually connected to. Redirects go
// through the same checks. Refused destinations are never connected to.
//
// The address policy is code.dny.dev/ssrf's, generated from the IANA special-purpose
// registries: for IPv4 everything special (this network, private, CGNAT, loopback, link-local
// incl. 169.254.169.254, benchmarking, documentation, multicast, reserved, broadcast); for
// IPv6 everything outside global unicast 2000::/3 (loopback, unspecified, IPv4-mapped,
// ULA incl. fd00:ec2::254, link-local, multicast, NAT64) and the special prefixes inside it
// (6to4, Teredo, documentation…). Ports: 443, and 80 only with AllowHTTP.
type Guard struct {
	opts     Options
	guardian *ssrf.Guardian
}

// NewGuard returns a guard; see Options.
func NewGuard(opts Options) *Guard {
	ports := []uint16{443}
	if opts.AllowHTTP {
		ports = append(ports, 80)
	}
	if len(opts.Ports) > 0 {
		ports = opts.Ports
	}
	return &Guard{opts: opts, guardian: ssrf.New(ssrf.WithPorts(ports...))}
}

// Options returns the options the guard was built with.
func (g *Guard) Options() Options { return g.opts }

// CheckURL validates a destination URL before any request: https (http only with
// AllowHTTP), a host, no non-canonical numeric host (0x7f000001, 127.1, 2130706433 are
// refused rather than guessed), no localhost names, and a literal IP must be allowed.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: not a URL", ErrBlocked)
	}
	if err := g.checkURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

func (g *Guard) checkURL(u *url.URL) error {
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && g.opts.AllowHTTP:
	default:
		if g.opts.AllowHTTP {
			return fmt.Errorf("%w: scheme %q (only http and https)", ErrBlocked, u.Scheme)
		}
		return fmt.Errorf("%w: scheme %q (only https)", ErrBlocked, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: no host", ErrBlocked)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("%w: port %q", ErrBlocked, port)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.checkAddr(netip.AddrPortFrom(ip, uint16(p)))
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	labels := strings.Split(name, ".")
	last := labels[len(labels)-1]
	switch {
	case last == "" || strings.ContainsAny(name, "%[]"):
		return fmt.Errorf("%w: host %q", ErrBlocked, host)
	case last[0] >= '0' && last[0] <= '9':
		// Top-level domains are never numeric: this is an IP in a form (hex, octal, short)
		// that some resolvers accept and others do not.
		return fmt.Errorf("%w: host %q is a non-canonical IP address", ErrBlocked, host)
	case last == "localhost" || last == "local" || last == "internal":
		return fmt.Errorf("%w: host %q is local", ErrBlocked, host)
	}
	return nil
}

// checkAddr applies the address policy, with the test allowances.
func (g *Guard) checkAddr(ap netip.AddrPort) error {
	for _, a := range g.opts.Allow {
		if a == ap {
			return nil
		}
	}
	if err := g.guardian.SafeAddrPort(ap); err != nil {
		return fmt.Errorf("%w: %w", ErrBlocked, err)
	}
	return nil
}

// control is the dialer's last check, on the address about to be connected to.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: network %s", ErrBlocked, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: address %q", ErrBlocked, address)
	}
	return g.checkAddr(ap)
}

// CheckDestination is CheckURL plus the resolution a request would make: every address the
// host resolves to must be allowed, and a host that does not resolve is an error — a channel
// is checked this way when it is set up, so a private or unreachable one is refused at once.
func (g *Guard) CheckDestination(ctx context.Context, raw string) (*url.URL, error) {
	u, err := g.CheckURL(raw)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	p, _ := strconv.ParseUint(port, 10, 16)
	ips, err := g.lookup(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", u.Hostname())
	}
	for _, ip := range ips {
		if err := g.checkAddr(netip.AddrPortFrom(ip, uint16(p))); err != nil {
			return nil, fmt.Errorf("%s resolves to a refused address: %w", u.Hostname(), err)
		}
	}
	return u, nil
}

// Exempt reports whether addr (host:port) is exempt from the guard's address policy: every
// address its host resolves to is one of Options.Allow (STEWARD_EGRESS_ALLOW). Only such a
// destination may be spoken to without TLS by the mail and calendar clients (docs/MAIL.md);
// a host that does not resolve is not exempt.
func (g *Guard) Exempt(ctx context.Context, addr string) bool {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || len(g.opts.Allow) == 0 {
		return false
	}
	ips, err := g.lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !slices.Contains(g.opts.Allow, netip.AddrPortFrom(ip, uint16(port))) {
			return false
		}
	}
	return true
}

// Dial connects to addr (host:port) through the guard, as the HTTP client's connections do:
// for protocols other than HTTP (the email channel's SMTP).
func (g *Guard) Dial(ctx context.Context, addr string) (net.Conn, error) {
	return g.dial(ctx, "tcp", addr)
}

// dial resolves the host, refuses the connection when any resolved address is refused
// (before connecting to any), and dials the allowed addresses in turn; the dialer's Control
// re-checks each one.
func (g *Guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: address %q", ErrBlocked, addr)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("%w: port %q", ErrBlocked, portStr)
	}
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	for _, ip := range ips {
		if err := g.checkAddr(netip.AddrPortFrom(ip, uint16(port))); err != nil {
			return nil, fmt.Errorf("%s resolves to a refused address: %w", host, err)
		}
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: g.control}
	var errs []error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// lookup resolves host: a literal IP is itself; names go to Options.Lookup or the system
// resolver, whose IPv4 answers come back IPv4-mapped and are unmapped (an A record is IPv4).
func (g *Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if g.opts.Lookup != nil {
		return g.opts.Lookup(ctx, host)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	for i, ip := range ips {
		if ip.Is4In6() {
			ips[i] = ip.Unmap()
		}
	}
	return ips, nil
}

// NewClient returns an HTTP client whose every connection and redirect passes a guard with
// opts: the one constructor for every request to a URL Steward did not fix itself.
func NewClient(opts Options) *http.Client {
	return NewGuard(opts).Client()
}

// Client returns an HTTP client whose every connection and redirect passes the guard. It
// uses no proxy (a proxy would be the only address the guard saw).
func (g *Guard) Client() *http.Client {
	timeout := g.opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	maxRedirects := g.opts.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = 5
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: g.opts.RootCAs},
	}
	return &http.Client{
		Transport: guarded{base: t, g: g},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return g.checkURL(req.URL)
		},
	}
}

// guarded checks every request's URL (the first and each redirect) before the transport
// resolves or dials anything.
type guarded struct {
	base http.RoundTripper
	g    *Guard
}

func (t guarded) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.checkURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}
