package trace

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
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

func TestCostMicros(t *testing.T) {
	t.Parallel()
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CachedTokens: 400_000}
	// 600k × 0.30 + 400k × 0.03 + 100k × 2.50 = 180000 + 12000 + 250000 micro-dollars.
	if got := CostMicros("gemini-2.5-flash", u); got != 442000 {
		t.Fatalf("cost = %d", got)
	}
	if got := CostMicros("models/gemini-2.5-flash-001", u); got != 442000 {
		t.Fatalf("versioned name cost = %d", got)
	}
	if got := CostMicros("scripted", u); got != 0 {
		t.Fatalf("unknown model cost = %d", got)
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
