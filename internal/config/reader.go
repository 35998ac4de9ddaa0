package config

import (
	"fmt"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// reader collects every problem instead of stopping at the first. Each area reads its
// variables through it (its read function beside the area's struct); the parsers here are
// the ones every area shares.
type reader struct {
	getenv func(string) string
	errs   []error
}

func (r *reader) fail(name, value, why string) {
	if len(value) > 40 {
		value = value[:40] + "…"
	}
	r.errs = append(r.errs, fmt.Errorf("%s=%q %s", name, value, why))
}

func (r *reader) str(name, def string) string {
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return v
	}
	return def
}

func (r *reader) intIn(name string, def, lo, hi int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail(name, v, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
		return def
	}
	return n
}

// floatIn is a number from lo to hi, or 0 when unset.
func (r *reader) floatIn(name string, lo, hi float64) float64 {
	v := r.str(name, "")
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) {
		r.fail(name, v, fmt.Sprintf("must be a number from %g to %g", lo, hi))
		return 0
	}
	return f
}

func (r *reader) boolean(name string) bool {
	switch v := strings.ToLower(r.str(name, "false")); v {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	default:
		r.fail(name, v, "must be on or off (true or false)")
		return false
	}
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.fail(name, v, "must be a positive duration such as 168h")
		return def
	}
	return d
}

func (r *reader) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(r.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(name, v, "must be one of "+strings.Join(allowed, ", "))
	return def
}

// httpURL fails when a set URL is not http:// or https://.
func (r *reader) httpURL(name, v string) {
	if v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		r.fail(name, v, "must start with http:// or https://")
	}
}

// headerName reads an optional HTTP header name (letters, digits and -), canonicalized.
func (r *reader) headerName(name string) string {
	v := r.str(name, "")
	for _, c := range []byte(v) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			r.fail(name, v, "must be an HTTP header name such as X-Forwarded-For")
			return ""
		}
	}
	return textproto.CanonicalMIMEHeaderKey(v)
}

// addrOrEmpty is an optional host:port: empty when unset.
func (r *reader) addrOrEmpty(name string) string {
	if r.str(name, "") == "" {
		return ""
	}
	return r.addr(name, "")
}

func (r *reader) addr(name, def string) string {
	v := r.str(name, def)
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		r.fail(name, v, "must be host:port, e.g. 127.0.0.1:8080")
		return def
	}
	return v
}
