// Package trace holds what Steward records about its own work besides the audit rows: the
// pricing table that turns token usage into an estimated cost, and the redaction applied to
// everything before it reaches a log or a trace.
package trace

import (
	"strings"

	"github.com/stewardhq/steward/internal/llm"
)

// Price is a model's list price in US dollars per million tokens.
type Price struct {
	Input, CachedInput, Output float64
}

// Prices are list prices for paid-tier, text, prompts up to 200k tokens.
// Source: https://ai.google.dev/gemini-api/docs/pricing (as read on 2026-11-30).
// Output includes thinking tokens, as Gemini bills them.
var Prices = map[string]Price{
	"gemini-2.5-flash":      {Input: 0.30, CachedInput: 0.03, Output: 2.50},
	"gemini-2.5-flash-lite": {Input: 0.10, CachedInput: 0.01, Output: 0.40},
	"gemini-2.5-pro":        {Input: 1.25, CachedInput: 0.125, Output: 10.00},
	"gemini-3-flash":        {Input: 0.50, CachedInput: 0.05, Output: 3.00},
	"gemini-3-pro":          {Input: 2.00, CachedInput: 0.20, Output: 12.00},
}

// CostMicros estimates the cost of one call in millionths of a US dollar. Cached input
// tokens are billed at the cached rate, the rest of the input at the full rate. A model
// missing from the table (the demo and scripted models) costs 0. Versioned names such as
// "gemini-2.5-flash-001" or "models/gemini-2.5-flash" use their base model's price.
func CostMicros(model string, u llm.Usage) int64 {
	p, ok := lookup(model)
	if !ok {
		return 0
	}
	cached := min(u.CachedTokens, u.InputTokens)
	// $/Mtok × tokens = micro-dollars.
	cost := p.Input*float64(u.InputTokens-cached) + p.CachedInput*float64(cached) + p.Output*float64(u.OutputTokens)
	return int64(cost + 0.5)
}

func lookup(model string) (Price, bool) {
	model = strings.TrimPrefix(model, "models/")
	for m := model; m != ""; {
		if p, ok := Prices[m]; ok {
			return p, true
		}
		i := strings.LastIndexByte(m, '-')
		if i < 0 {
			break
		}
		m = m[:i]
	}
	return Price{}, false
}
