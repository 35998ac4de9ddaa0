package trace

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/steward"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, secret string }{
		{"steward key", "key stw_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abc used", "stw_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abc"},
		{"google key", "GEMINI_API_KEY=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"},
		{"openai key", "sk-proj-abcdefghijklmnopqrstuvwxyz123456", "abcdefghijklmnopqrstuvwxyz123456"},
		{"aws access key", "AKIAIOSFODNN7EXAMPLE in config", "AKIAIOSFODNN7EXAMPLE"},
		{"bearer header", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "eyJhbGciOiJIUzI1NiJ9"},
		{"basic auth", "authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"},
		{"openssh key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXk"},
		{"password in url", "dial postgres://steward_app:hunter2secret@db:5432/steward failed", "hunter2secret"},
		{"password in https url", "fetch https://bob:pa55word@example.com/x", "pa55word"},
		{"password field", `{"user":"bob","password":"correct-horse"}`, "correct-horse"},
		{"token query", "GET /cb?code=1&token=abcdef123456", "abcdef123456"},
		{"github token", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"},
		{"slack token", "xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij"},
		{"webhook secret", "secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Redact(tc.in)
			if strings.Contains(got, tc.secret) {
				t.Fatalf("secret survived redaction") // never print the secret itself
			}
			if !strings.Contains(got, "[REDACTED") {
				t.Fatalf("no redaction marker in output")
			}
		})
	}
	for _, clean := range []string{"buy milk tomorrow", "https://example.com/path?q=1", "task 3f2a id", "the password policy"} {
		if got := Redact(clean); got != clean {
			t.Errorf("Redact(%q) = %q, want it unchanged", clean, got)
		}
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	p := NewPrices(nil, func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) })
	u := steward.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CachedTokens: 400_000}
	// 600k × 0.30 + 400k × 0.03 + 100k × 2.50 = 180000 + 12000 + 250000 micro-dollars.
	for _, m := range []string{"gemini-3.5-flash-lite", "models/gemini-3.5-flash-lite", "gemini-3.5-flash-lite-001"} {
		if got, ok := p.Cost(m, u); !ok || got != 442000 {
			t.Errorf("Cost(%q) = %d, %v; want 442000", m, got, ok)
		}
	}
	for _, m := range Free {
		if got, ok := p.Cost(m, u); !ok || got != 0 {
			t.Errorf("free model %q: cost %d, %v", m, got, ok)
		}
	}
	// No price is guessed from a similar name: a guess can be too low (an image model billed
	// as its text sibling), so these have none and callers refuse them.
	for _, m := range []string{"gemini-9-flash", "gemini-3.5-flash-image", "gemini-3.5-flash-preview-09-2026", "gemini-2.5-flash", "demo", ""} {
		if got, ok := p.Cost(m, u); ok {
			t.Errorf("Cost(%q) = %d, priced; want no price", m, got)
		}
	}
}

// TestPricesByDate: gemini-3.8-flash's introductory price ends with 2026; the list price
// follows, and an operator's price replaces both.
func TestPricesByDate(t *testing.T) {
	t.Parallel()
	u := steward.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}
	at := func(s string) func() time.Time {
		return func() time.Time { tm, _ := time.Parse(time.RFC3339, s); return tm }
	}
	for _, tc := range []struct {
		now  string
		want int64
	}{
		{"2026-12-31T23:59:59Z", 750_000 + 3_750_000},
		{"2027-01-01T00:00:00Z", 1_500_000 + 7_500_000},
		{"2031-06-01T00:00:00Z", 1_500_000 + 7_500_000},
	} {
		if got, ok := NewPrices(nil, at(tc.now)).Cost("gemini-3.8-flash", u); !ok || got != tc.want {
			t.Errorf("at %s: cost %d, %v; want %d", tc.now, got, ok, tc.want)
		}
	}
	op := NewPrices(map[string]Price{"gemini-3.8-flash": {Input: 2, Output: 4}, "models/gemini-2.5-flash": {Input: 0.3, CachedInput: 0.03, Output: 2.5}}, at("2026-12-01T00:00:00Z"))
	if got, _ := op.Cost("gemini-3.8-flash", u); got != 6_000_000 {
		t.Errorf("operator's price not used: %d", got)
	}
	if got, ok := op.Cost("gemini-2.5-flash", u); !ok || got != 2_800_000 {
		t.Errorf("operator's price for an unlisted model: %d, %v", got, ok)
	}
}

// TestFreeModelsByName: the free list names exactly the demo and scripted models.
func TestFreeModelsByName(t *testing.T) {
	t.Parallel()
	if want := []string{demo.Name, scripted.Name}; !slices.Equal(Free, want) {
		t.Fatalf("Free = %q, want %q", Free, want)
	}
}

// TestDefaultModelsAreCurrentAndPriced: the default turn and background models are in the list
// prices, which hold only current models (GA, no shutdown announced).
func TestDefaultModelsAreCurrentAndPriced(t *testing.T) {
	t.Parallel()
	for _, m := range []string{config.DefaultModel, config.DefaultFastModel} {
		ps, ok := ListPrices[m]
		if !ok || len(ps) == 0 || ps[0].Input <= 0 || ps[0].Output <= 0 {
			t.Errorf("default model %q is not in the list prices of current models", m)
		}
	}
}

// TestRedactAnchors: the cheap pre-check never lets a secret through that a pattern catches,
// and skips ordinary trace rows.
func TestRedactAnchors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{"usage":{"input_tokens":10,"output_tokens":2},"model":"gemini-2.5-flash"}`, `{"tool":"list_tasks","ok":true}`} {
		if mayHoldSecret(s) {
			t.Errorf("mayHoldSecret(%q) = true", s)
		}
	}
	for _, s := range []string{"token=abcdef123456", `{"token": "abcdef123456"}`, "TOKEN:abcdef", "x Bearer abc"} {
		if !mayHoldSecret(s) {
			t.Errorf("mayHoldSecret(%q) = false", s)
		}
	}
}
