package gemini

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
)

// policy is p classifying the Gemini API's errors: the one retry policy (package retry) with
// Gemini's Retryable and the wait its errors name (google.rpc.RetryInfo).
//
// The genai SDK has retry options of its own (HTTPOptions.RetryOptions), but they ignore
// Retry-After and RetryInfo and sleep through a deadline: they stay off, and retry.Policy.Do
// retries whole SDK calls instead.
func policy(p retry.Policy) retry.Policy {
	p.Retryable, p.Delay = Retryable, retryInfoDelay
	return p
}

// Retryable reports whether err is a Gemini API error worth another attempt (rate limited,
// 429; or the server failed or is unavailable: 500, 502, 503, 504), with its status, or one
// that never reached the server (llm.IsUnreachable: status 0).
func Retryable(err error) (int, bool) {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0, llm.IsUnreachable(err)
	}
	switch apiErr.Code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return apiErr.Code, true
	}
	return apiErr.Code, false
}

// retryInfoDelay reads google.rpc.RetryInfo's retryDelay ("37s", "0.5s") from an API error.
func retryInfoDelay(err error) time.Duration {
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) {
		return 0
	}
	for _, d := range apiErr.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if delay, err := time.ParseDuration(s); err == nil && delay > 0 {
				return delay
			}
		}
	}
	return 0
}
