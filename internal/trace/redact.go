package trace

import (
	"regexp"
	"strings"
)

// secretPatterns match secrets that must never reach a log or a trace.
var secretPatterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// PEM private keys, whole block.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), "[REDACTED PRIVATE KEY]"},
	// Passwords in URLs: scheme://user:password@host.
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/?#\s@"']+:)[^@/\s"']+@`), "${1}[REDACTED]@"},
	// Authorization headers and bearer tokens.
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}`), "$1 [REDACTED]"},
	// Steward API keys, Google API keys, OpenAI-style keys, AWS access keys, GitHub and Slack tokens.
	{regexp.MustCompile(`\bstw_[A-Za-z0-9_-]{20,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), "[REDACTED]"},
	{regexp.MustCompile(`\bsk-(proj-|ant-)?[A-Za-z0-9_-]{20,}`), "[REDACTED]"},
	{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), "[REDACTED]"},
	{regexp.MustCompile(`\b(ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{20,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), "[REDACTED]"},
	{regexp.MustCompile(`\bwhsec_[A-Za-z0-9+/=]{16,}`), "[REDACTED]"},
	// key=value secrets: password=..., api_key: "...", token=...
	{regexp.MustCompile(`(?i)\b((?:pass(?:word|wd)?|secret|api[_-]?key|access[_-]?token|token)["']?\s*[:=]\s*["']?)[^\s"'&,;]{4,}`), "${1}[REDACTED]"},
}

// anySecret matches wherever any of secretPatterns may: one scan of the text finds the spots,
// and only those are rewritten pattern by pattern.
var anySecret = func() *regexp.Regexp {
	alts := make([]string, len(secretPatterns))
	for i, p := range secretPatterns {
		alts[i] = "(?:" + p.re.String() + ")"
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}()

// Redact replaces secrets in s — API keys, bearer tokens, private keys, passwords in URLs
// and key=value secrets — with [REDACTED].
func Redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return anySecret.ReplaceAllStringFunc(s, func(m string) string {
		for _, p := range secretPatterns {
			m = p.re.ReplaceAllString(m, p.repl)
		}
		return m
	})
}

// Anchors: every pattern above contains one of these, so text without any of them cannot
// hold a secret and skips the regular expressions (most trace rows).
var (
	exactAnchors = []string{"PRIVATE KEY", "://", "stw_", "AIza", "sk-", "AKIA", "ASIA", "gho_", "ghp_", "ghu_", "ghs_", "github_pat_", "xox", "whsec_"}
	foldAnchors  = []string{"bearer", "basic", "pass", "secret", "api"}
)

// mayHoldSecret reports whether s contains an anchor of a secret pattern. "token" counts
// only where the key=value pattern could match it: followed by a quote, space, ':' or '='
// (so "input_tokens" does not).
func mayHoldSecret(s string) bool {
	for _, a := range exactAnchors {
		if strings.Contains(s, a) {
			return true
		}
	}
	lower := strings.ToLower(s)
	for _, a := range foldAnchors {
		if strings.Contains(lower, a) {
			return true
		}
	}
	for i := 0; ; {
		j := strings.Index(lower[i:], "token")
		if j < 0 {
			return false
		}
		i += j + len("token")
		if i >= len(lower) || strings.IndexByte("\"' \t:=", lower[i]) >= 0 {
			return true
		}
	}
}
