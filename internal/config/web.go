package config

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"time"
)

// Web is how the deployment is reached from outside: its public URL, the origin and relying
// party passkeys are bound to, the proxy in front of it, and how long an approval link lives.
type Web struct {
	// PublicURL is the deployment's public base URL (STEWARD_PUBLIC_URL, e.g.
	// https://steward.example.com): the one-tap approval links of a suspended turn's
	// notification point there. Empty sends no links.
	PublicURL string
	// PublicURLParam is an SSM parameter holding STEWARD_PUBLIC_URL (STEWARD_PUBLIC_URL_SSM),
	// read at cold start: the template stores the deployed web app's URL there, which no
	// function's environment can name without a circular reference. WithPublicURL applies it.
	PublicURLParam string
	// PasskeyOrigin is the web app's origin as the browser sees it, scheme://host[:port]
	// (STEWARD_PASSKEY_ORIGIN): a passkey ceremony from any other origin is refused. Unset, it is
	// STEWARD_PUBLIC_URL's origin, else http://localhost:PORT for the port of STEWARD_ADDR
	// (`steward serve`; a browser calls only names, never IP addresses, a relying party).
	PasskeyOrigin string
	// PasskeyRPID is the WebAuthn relying party ID passkeys are bound to
	// (STEWARD_PASSKEY_RP_ID): PasskeyOrigin's host or a parent domain of it, never an IP
	// address. Unset, it is PasskeyOrigin's host. Empty when that host is an IP address:
	// passkeys are then off (docs/ARCHITECTURE.md §13).
	PasskeyRPID string
	// TrustedProxyHeader names the header a trusted reverse proxy in front of Steward adds the
	// client's address to (STEWARD_TRUSTED_PROXY_HEADER, e.g. X-Forwarded-For): the
	// limiters (sign-in and API-key failures, approval links) count a client by the
	// right-most address in it, the one the proxy wrote (ratelimit.Client). Empty, the
	// client is the connection's peer — on Lambda, API Gateway's source IP. Set it only
	// behind such a proxy: anyone can send the header.
	TrustedProxyHeader string
	// LinkTTL caps how long an approval link lives (STEWARD_LINK_TTL, 24h by default); a link
	// never outlives its turn's suspension.
	LinkTTL time.Duration

	// passkeyEnv is what STEWARD_PASSKEY_ORIGIN and STEWARD_PASSKEY_RP_ID said, for
	// WithPublicURL to derive the passkey settings again.
	passkeyEnv [2]string
}

// web reads the Web area; the passkey origin follows the public URL, else addr, the address
// `steward serve` listens on (Server.Addr).
func (r *reader) web(addr string) Web {
	w := Web{
		PublicURL:          strings.TrimRight(r.str("STEWARD_PUBLIC_URL", ""), "/"),
		PublicURLParam:     r.str("STEWARD_PUBLIC_URL_SSM", ""),
		TrustedProxyHeader: r.headerName("STEWARD_TRUSTED_PROXY_HEADER"),
		LinkTTL:            r.duration("STEWARD_LINK_TTL", 24*time.Hour),
	}
	r.httpURL("STEWARD_PUBLIC_URL", w.PublicURL)
	w.passkeyEnv = [2]string{r.str("STEWARD_PASSKEY_ORIGIN", ""), r.str("STEWARD_PASSKEY_RP_ID", "")}
	w.PasskeyOrigin, w.PasskeyRPID = r.passkey(w.PublicURL, addr)
	return w
}

// WithPublicURL is c with the public URL u read after Load (STEWARD_PUBLIC_URL_SSM): the
// passkey origin and relying party and the VAPID subject that follow the public URL follow
// u, and are checked as Load checks them. A public URL set in the environment wins.
func (c Config) WithPublicURL(u string) (Config, error) {
	if c.PublicURL != "" {
		return c, nil
	}
	c.PublicURL = strings.TrimRight(strings.TrimSpace(u), "/")
	r := reader{getenv: func(name string) string {
		switch name {
		case "STEWARD_PASSKEY_ORIGIN":
			return c.passkeyEnv[0]
		case "STEWARD_PASSKEY_RP_ID":
			return c.passkeyEnv[1]
		}
		return ""
	}}
	r.httpURL("STEWARD_PUBLIC_URL", c.PublicURL)
	c.PasskeyOrigin, c.PasskeyRPID = r.passkey(c.PublicURL, c.Addr)
	if c.VAPIDPublicKey != "" || c.VAPIDPrivateKey != "" || c.VAPIDPrivateKeyParam != "" {
		if c.VAPIDSubject == "" {
			c.VAPIDSubject = c.PublicURL
		}
		if err := checkSubject(c.VAPIDSubject, c.PublicURL); err != nil {
			r.errs = append(r.errs, err)
		}
	}
	return c, errors.Join(r.errs...)
}

// defaultOrigin is the passkey origin when none is set: the public URL, else the address
// served on (an IP address or no host is localhost); "" when addr is not host:port.
func defaultOrigin(publicURL, addr string) string {
	if publicURL != "" {
		return publicURL
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if host == "" || net.ParseIP(host) != nil {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// parseOrigin parses an http(s) origin: a scheme and a host, no path, query or user.
func parseOrigin(origin string) (*url.URL, bool) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, false
	}
	return u, true
}

// passkey reads STEWARD_PASSKEY_ORIGIN and STEWARD_PASSKEY_RP_ID, deriving what is unset
// from the public URL or, without one, from the listening address (Web.PasskeyOrigin).
func (r *reader) passkey(publicURL, addr string) (origin, rpID string) {
	origin = strings.TrimRight(r.str("STEWARD_PASSKEY_ORIGIN", ""), "/")
	explicit := origin != ""
	if !explicit {
		origin = defaultOrigin(publicURL, addr)
	}
	u, ok := parseOrigin(origin)
	if !ok {
		if explicit {
			r.fail("STEWARD_PASSKEY_ORIGIN", origin, "must be an origin such as https://steward.example.com (scheme, host, optional port; no path)")
		}
		return "", ""
	}
	origin = u.Scheme + "://" + u.Host
	host := strings.ToLower(u.Hostname())
	rpID = strings.ToLower(r.str("STEWARD_PASSKEY_RP_ID", ""))
	switch {
	case rpID == "" && net.ParseIP(host) != nil:
		if explicit {
			r.fail("STEWARD_PASSKEY_ORIGIN", origin, "has an IP address for its host; passkeys need a name (set STEWARD_PASSKEY_RP_ID, or use a name such as localhost)")
		}
		return origin, ""
	case rpID == "":
		rpID = host
	case net.ParseIP(rpID) != nil:
		r.fail("STEWARD_PASSKEY_RP_ID", rpID, "must be a domain name, not an IP address")
		return origin, ""
	case host != rpID && !strings.HasSuffix(host, "."+rpID):
		r.fail("STEWARD_PASSKEY_RP_ID", rpID, "must be the passkey origin's host ("+host+") or a parent domain of it")
		return origin, ""
	}
	return origin, rpID
}
