package httpapi

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/ratelimit"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// RequestIDHeader carries the request id, in and out.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds an incoming request id we are willing to reuse.
const maxRequestIDLen = 128

// saneRequestID accepts an incoming request id made only of characters that are safe in
// headers and logs: letters, digits and - _ . : = + / @.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:=+/@", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// withRequest gives each request an id (a sane incoming X-Request-Id, or a new one), echoes
// it in the response, and puts a logger carrying it (and, on Lambda, the invocation's
// aws_request_id) in the request context.
func withRequest(base zerolog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get(RequestIDHeader)
			if !saneRequestID(id) {
				id = uuid.NewString()
			}
			w.Header().Set(RequestIDHeader, id)
			c := base.With().Str("request_id", id)
			if lc, ok := lambdacontext.FromContext(r.Context()); ok {
				// On Lambda, the invocation's id too: Lambda's own records carry it.
				c = c.Str("aws_request_id", lc.AwsRequestID)
			}
			log := c.Logger()
			next.ServeHTTP(w, r.WithContext(log.WithContext(r.Context())))
		})
	}
}

// statusWriter records the status and size of a response. It unwraps for
// http.ResponseController, so streaming handlers can still flush.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// accessLog writes one line per request: method, route pattern, status, duration and size;
// never the body, the query or the key. The line also carries the owner and turn ids that
// later middleware and the agent attached to the request's logger.
func accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		level := zerolog.InfoLevel
		if sw.status >= 500 {
			level = zerolog.ErrorLevel
		}
		zerolog.Ctx(r.Context()).WithLevel(level).Str("method", r.Method).Str("route", route).
			Int("status", sw.status).Dur("duration", time.Since(start)).Int64("bytes", sw.bytes).Msg("request")
	})
}

// recoverPanics turns a panic into a 500 internal error with no detail for the client, and
// logs the panic with its stack. http.ErrAbortHandler is passed on, as net/http expects.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			zerolog.Ctx(r.Context()).Error().Interface("panic", v).Bytes("stack", debug.Stack()).Msg("handler panicked")
			if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
				return // the response has begun; the client sees it cut short
			}
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: errorDetail{Code: steward.CodeInternal, Message: internalMessage}})
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody refuses bodies over max bytes: at once when Content-Length says so, else when
// the handler reads past the limit (http.MaxBytesReader; decode reports 413).
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > max {
				fail(w, r, errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "request body is larger than %d bytes", max))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
			next.ServeHTTP(w, r)
		})
	}
}

// requireJSON refuses a request body that is not declared application/json with 415.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			fail(w, r, errorf(http.StatusUnsupportedMediaType, steward.CodeInvalid, "Content-Type must be application/json"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// principalKey is the context key of the authenticated principal.
type principalKey struct{}

// principal returns the owner a request was authenticated as; authenticate guarantees it on
// every /v1 route.
func principal(ctx context.Context) store.Principal {
	p, _ := ctx.Value(principalKey{}).(store.Principal)
	return p
}

// authenticate requires "Authorization: Bearer <api key>" and a key the Authenticator knows.
// Anything else is 401 unauthorized with a WWW-Authenticate challenge; a failure of the
// lookup itself is 500. Unknown keys are counted (Deps.KeyFailures): past the limit the
// answer is 429 rate_limited with Retry-After instead. The owner id joins the request's
// logger.
func (a *api) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="steward"`)
			fail(w, r, errorf(http.StatusUnauthorized, steward.CodeUnauthorized, "missing or malformed Authorization header; send Authorization: Bearer <api key>"))
			return
		}
		client := ratelimit.Client(r, a.d.TrustedProxyHeader)
		if refusal := a.d.KeyFailures.Check(client); refusal != nil {
			tooManyFailures(w, r, refusal)
			return
		}
		p, err := a.d.Auth.Authenticate(r.Context(), key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if refusal := a.d.KeyFailures.Failed(client, key); refusal != nil {
				tooManyFailures(w, r, refusal)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="steward", error="invalid_token"`)
			fail(w, r, errorf(http.StatusUnauthorized, steward.CodeUnauthorized, "unknown or revoked API key"))
			return
		case err != nil:
			// %v, not %w: whatever the lookup's error is, the client sees an internal error.
			fail(w, r, fmt.Errorf("authenticate: %v", err))
			return
		}
		zerolog.Ctx(r.Context()).UpdateContext(func(c zerolog.Context) zerolog.Context {
			return c.Stringer("owner_id", p.OwnerID)
		})
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// tooManyFailures is the 429 of a client or key prefix with too many unknown keys.
func tooManyFailures(w http.ResponseWriter, r *http.Request, refusal *auth.Refusal) {
	w.Header().Set("Retry-After", strconv.Itoa(refusal.Seconds()))
	fail(w, r, errorf(http.StatusTooManyRequests, steward.CodeRateLimited, "too many failed API-key attempts %s", refusal.Why()))
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}
