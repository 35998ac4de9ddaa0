package memory

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The genai SDK turns an error response into a genai.APIError, which keeps the status and
// body but not the headers. retryAfterTransport reads Retry-After on the way through and
// leaves it in a retryHint that the caller put in the request's context, so each call learns
// only its own server's answer.

// retryHintKey is the context key of a call's *retryHint.
type retryHintKey struct{}

// retryHint is the wait a server asked for, if any.
type retryHint struct {
	mu    sync.Mutex
	after time.Duration
}

func (h *retryHint) set(d time.Duration) {
	h.mu.Lock()
	h.after = d
	h.mu.Unlock()
}

func (h *retryHint) get() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.after
}

// retryAfterTransport records the Retry-After of 429 and 503 responses in the request's
// retryHint. base nil means http.DefaultTransport.
type retryAfterTransport struct {
	base http.RoundTripper
}

// RoundTrip sends req with the base transport.
func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	if h, ok := req.Context().Value(retryHintKey{}).(*retryHint); ok {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			h.set(d)
		}
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > 24*3600 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}
