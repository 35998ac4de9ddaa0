// Package trace holds what Steward records about its own work besides the audit rows: the
// pricing table that turns token usage into an estimated cost, and the redaction applied to
// everything before it reaches a log or a trace.
package trace

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// Price is a model's list price in US dollars per million tokens, until a date.
type Price struct {
	Input, CachedInput, Output float64
	// AudioInput is the price of audio input tokens (a recording a model transcribes,
	// docs/ARCHITECTURE.md §18); zero prices them at Input. A text-to-speech model's output
	// tokens are audio and Output is their price.
	AudioInput float64
	// Until is when this price ends (exclusive, UTC); zero means it has no announced end.
	Until time.Time
}

// ListPrices are the providers' list prices. Google's: the current Gemini text models (GA, and
// no shutdown date announced on https://ai.google.dev/gemini-api/docs/deprecations), paid tier, Standard
// inference, text input, as read on 2026-11-30. A model's prices are in date order; Output
// includes thinking tokens, as Gemini bills them.
//
// Sources, read 2026-11-30 from stored copies:
//   - https://ai.google.dev/gemini-api/docs/pricing: gemini-3.8-flash $0.75 in / $3.75 out
//     through 2026-12-31, then $1.50 / $7.50 from 2027-01-01; gemini-3.5-flash $1.50 / $9.00;
//     gemini-3.5-flash-lite $0.30 / $2.50.
//   - https://ai.google.dev/gemini-api/docs/whats-new-gemini-3.6: gemini-3.6-flash $1.50 / $7.50.
//   - https://ai.google.dev/gemini-api/docs/optimization: context caching is a 90% discount, so
//     cached input is a tenth of the input price.
//
// Deliberately absent: the Gemini 2.5 models (shut down or announced for shutdown on the
// deprecations page), gemini-3.7-flash (deprecated; its requests are routed to
// gemini-3.8-flash), and preview models. An operator who still uses one prices it with
// STEWARD_MODEL_PRICES (docs/CONFIGURATION.md, "Models and prices").
var ListPrices = map[string][]Price{
	"gemini-3.8-flash": {
		{Input: 0.75, CachedInput: 0.075, Output: 3.75, Until: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Input: 1.50, CachedInput: 0.15, Output: 7.50},
	},
	"gemini-3.6-flash":      {{Input: 1.50, CachedInput: 0.15, Output: 7.50}},
	"gemini-3.5-flash":      {{Input: 1.50, CachedInput: 0.15, Output: 9.00}},
	"gemini-3.5-flash-lite": {{Input: 0.30, CachedInput: 0.03, Output: 2.50}},

	// OpenAI, Standard tier, text, as read on 2026-11-30 from stored copies of pages that
	// quote https://developers.openai.com/api/docs/pricing (OpenAI's own page was not among
	// the stored copies; check it before relying on these): gpt-5.4-mini $0.75 in / $0.075
	// cached / $4.50 out (docs.rs adk-model src/openai/pricing.rs, "March 2026"; apidog.com
	// and docs.venice.ai gpt-5-4-mini pages agree on input and output); gpt-5-mini $0.25 /
	// $0.025 / $2.00 (nicolalazzari.ai "OpenAI API Pricing Explained (2026)"; Azure AI Foundry's
	// list via ai.cloudprice.net, 2026-06-15). Output includes reasoning tokens, as OpenAI
	// bills them. Any other OpenAI-compatible model is priced with STEWARD_MODEL_PRICES.
	"gpt-5.4-mini": {{Input: 0.75, CachedInput: 0.075, Output: 4.50}},
	"gpt-5-mini":   {{Input: 0.25, CachedInput: 0.025, Output: 2.00}},

	// OpenAI's audio models, by the unit OpenAI bills (developers.openai.com model pages, read
	// 2026-12-04 from stored copies), turned into tokens as internal/voice counts them when a
	// server reports no usage (docs/ARCHITECTURE.md §18): whisper-1 is $0.006 a minute of
	// audio, and Steward counts 32 audio tokens a second (1,920 a minute), so $3.125 per 1M
	// audio tokens; tts-1 is $15 per 1M characters, and Steward counts a token per four
	// characters, so $60 per 1M input tokens (its audio output is not billed apart).
	"whisper-1": {{AudioInput: 3.125}},
	"tts-1":     {{Input: 60}},
}

// Free names the models that cost nothing: the offline demo model (internal/llm/demo) and the
// scripted test model (internal/llm/scripted). They are free by name, never because a lookup
// failed; pricing_test.go checks the names against the packages.
var Free = []string{"demo (offline, no GEMINI_API_KEY)", "scripted"}

// Prices prices model calls: the list prices, extended and overridden by the operator's own
// (STEWARD_MODEL_PRICES). A model with neither has no price; callers refuse it rather than
// count it as free. Prices is safe for concurrent use.
type Prices struct {
	table map[string][]Price
	now   steward.Clock
}

// NewPrices returns the list prices with operator's prices on top (an operator's price has no
// end date and replaces the model's list prices). now is the clock that picks a dated price;
// nil is the system clock.
func NewPrices(operator map[string]Price, now steward.Clock) *Prices {
	table := make(map[string][]Price, len(ListPrices)+len(operator))
	for m, ps := range ListPrices {
		table[m] = ps
	}
	for m, p := range operator {
		p.Until = time.Time{}
		table[normalize(m)] = []Price{p}
	}
	return &Prices{table: table, now: now}
}

// Lookup returns model's price now. A free model's price is zero; ok is false when the model
// has no price. Names are matched exactly, after dropping a "models/" prefix and a numeric
// version suffix ("gemini-3.5-flash-001" is gemini-3.5-flash); nothing else is guessed, since
// a guessed price can be too low.
func (p *Prices) Lookup(model string) (Price, bool) {
	for _, f := range Free {
		if model == f {
			return Price{}, true
		}
	}
	model = normalize(model)
	ps, ok := p.table[model]
	if !ok {
		if i := strings.LastIndexByte(model, '-'); i > 0 && isDigits(model[i+1:]) {
			ps, ok = p.table[model[:i]]
		}
	}
	if !ok || len(ps) == 0 {
		return Price{}, false
	}
	now := p.now.Now()
	for _, pr := range ps {
		if pr.Until.IsZero() || now.Before(pr.Until) {
			return pr, true
		}
	}
	return ps[len(ps)-1], true // past every end date: the latest price, never none
}

// Cost estimates one call's cost in millionths of a US dollar; ok is false when the model has
// no price (and the cost is then 0: the caller decides what to charge instead).
func (p *Prices) Cost(model string, u steward.Usage) (micros int64, ok bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return pr.Micros(u), true
}

// Models lists the models with a price, free ones aside, sorted.
func (p *Prices) Models() []string {
	out := make([]string, 0, len(p.table))
	for m := range p.table {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Micros is the cost of u at this price in millionths of a US dollar: cached input tokens at
// the cached rate, the rest of the input at the full rate.
func (pr Price) Micros(u steward.Usage) int64 {
	cached := min(max(u.CachedTokens, 0), u.InputTokens)
	// $/Mtok × tokens = micro-dollars.
	cost := pr.Input*float64(u.InputTokens-cached) + pr.CachedInput*float64(cached) + pr.Output*float64(u.OutputTokens)
	return int64(math.Round(cost))
}

// AudioMicros is Micros with audio of the input tokens priced at the audio rate (AudioInput,
// or Input when the price names none).
func (pr Price) AudioMicros(u steward.Usage, audio int64) int64 {
	audio = min(max(audio, 0), u.InputTokens)
	rate := pr.AudioInput
	if rate == 0 {
		rate = pr.Input
	}
	text := u
	text.InputTokens -= audio
	return pr.Micros(text) + int64(math.Round(rate*float64(audio)))
}

func normalize(model string) string { return strings.TrimPrefix(strings.TrimSpace(model), "models/") }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
