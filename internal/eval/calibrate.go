package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/fixture"
	"github.com/stewardhq/steward/internal/llm/gemini"
	"github.com/stewardhq/steward/internal/steward"
)

// The token estimate's calibration: the context budget estimates a request's input
// tokens from characters (agent.TokenRates, one rate for prose, one for JSON); Calibrate
// compares that estimate with Gemini's countTokens on a fixed calibration set and reports the
// error per class. The counts come through a fixture file (CountFixtureFile): recorded once from
// the real API with a key, replayed offline after that.

// CountFixtureFile is where the recorded countTokens calls live, under the tasks' directory.
const CountFixtureFile = "fixtures/count_tokens.json"

// Calibration classes: a sample with a tool call or result is JSON, any other prose.
const (
	ClassProse = "prose"
	ClassJSON  = "json"
)

// Sample is one conversation of the calibration set: the messages the estimator is used on,
// sent to countTokens as the exact contents the Gemini adapter would send.
type Sample struct {
	ID       string            `json:"id"`
	Class    string            `json:"class"`
	Messages []steward.Message `json:"messages"`
}

// CalibrationSet is the calibration samples for tasks: each task's message (prose); for each
// task with starting data, the conversation of a tool call returning that data (JSON); the
// system prompt; and long prose and JSON tool results generated deterministically. The same
// tasks always give the same samples, byte for byte (the fixtures are keyed by them).
func CalibrationSet(tasks []Task) []Sample {
	var out []Sample
	user := func(text string) steward.Message {
		return steward.Message{Role: steward.RoleUser, Parts: []steward.Part{{Text: text}}}
	}
	for _, t := range tasks {
		out = append(out, Sample{ID: "task/" + t.ID, Class: ClassProse, Messages: []steward.Message{user(t.Message)}})
	}
	for _, t := range tasks {
		result := setupResult(t)
		if result == nil {
			continue
		}
		tool := "lookup"
		if names := append(append([]string{}, t.Expect.Called...), t.Expect.CalledAny...); len(names) > 0 {
			tool = names[0]
		}
		out = append(out, Sample{ID: "tool/" + t.ID, Class: ClassJSON, Messages: toolTurn(t.ID, user(t.Message), tool, map[string]any{"query": t.Message}, result)})
	}
	out = append(out, Sample{ID: "system-prompt", Class: ClassProse, Messages: []steward.Message{user(agent.SystemPrompt)}})
	for _, n := range []int{1, 4, 12} {
		out = append(out, Sample{ID: fmt.Sprintf("prose/%d-paragraphs", n), Class: ClassProse,
			Messages: []steward.Message{user(prose(n))}})
	}
	for _, n := range []int{5, 25, 80} {
		out = append(out, Sample{ID: fmt.Sprintf("json/transactions-%d", n), Class: ClassJSON,
			Messages: toolTurn(fmt.Sprint("tx", n), user("What did I spend recently?"), "search_transactions", map[string]any{"limit": n}, transactions(n))})
		out = append(out, Sample{ID: fmt.Sprintf("json/search-%d", n), Class: ClassJSON,
			Messages: toolTurn(fmt.Sprint("web", n), user("Find me reviews of quiet dishwashers."), "web_search", map[string]any{"query": "quiet dishwasher reviews", "max_results": n}, searchResults(n))})
	}
	return out
}

// setupResult is a task's starting data as a tool would return it; nil when it has none.
func setupResult(t Task) any {
	var items []map[string]any
	for i, title := range t.Setup.Tasks {
		items = append(items, map[string]any{"id": sampleID(t.ID, "task", i), "kind": "task", "title": title, "status": "open"})
	}
	for i, fact := range t.Setup.Facts {
		items = append(items, map[string]any{"id": sampleID(t.ID, "fact", i), "kind": "fact", "content": fact})
	}
	for i, d := range t.Setup.Documents {
		items = append(items, map[string]any{"id": sampleID(t.ID, "document", i), "kind": "document", "name": d.Name, "text": d.Text})
	}
	if t.Setup.Ledger {
		items = append(items, transactions(12)...)
	}
	if items == nil {
		return nil
	}
	return map[string]any{"items": items, "count": len(items)}
}

func sampleID(parts ...any) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(parts...))).String()
}

// toolTurn is a conversation: ask, a model call of tool with args, its result.
func toolTurn(id string, ask steward.Message, tool string, args, result any) []steward.Message {
	a, _ := json.Marshal(args)
	r, _ := json.Marshal(result)
	callID := sampleID(id, "call")
	return []steward.Message{ask,
		{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &steward.ToolCall{ID: callID, Name: tool, Args: a, MintedID: true}}}},
		{Role: steward.RoleUser, Parts: []steward.Part{{ToolResult: &steward.ToolResult{CallID: callID, Name: tool, Output: r, MintedID: true}}}},
	}
}

// The generated samples' material: a fixed seed, so that they never change.
func sampleRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5157)) }

var sentences = []string{
	"The landlord confirmed that the heating will be serviced on the second Tuesday of the month.",
	"Remember to renew the car insurance before it lapses, and compare at least three quotes.",
	"Anna asked whether the school trip needs a signed consent form and thirty euros in cash.",
	"My electricity bill went up by almost twelve percent since the new tariff started in spring.",
	"Could you remind me to call the dentist tomorrow morning, ideally before nine o'clock?",
	"The plumber said the leak under the kitchen sink came from a worn washer, not the pipe itself.",
	"We are planning a weekend in Lisbon; flights on Friday evening look cheaper than Saturday.",
	"Please keep a note that the bicycle lock combination was changed after the repair.",
	"Grandma's birthday is on the fourteenth, and she would love a framed photo of the garden.",
	"The contract says the notice period is three months, in writing, to the end of a quarter.",
	"I paid the gym membership twice in March; the second charge should be refunded.",
	"Tax documents from the bank arrive in February, and the return is due by the end of July.",
}

// prose is n paragraphs of household prose.
func prose(n int) string {
	r := sampleRand(uint64(n))
	paras := make([]string, n)
	for i := range paras {
		s := make([]string, 4+r.IntN(4))
		for j := range s {
			s[j] = sentences[r.IntN(len(sentences))]
		}
		paras[i] = strings.Join(s, " ")
	}
	return strings.Join(paras, "\n\n")
}

var merchants = []string{"REWE Markt", "Deutsche Bahn", "Spotify AB", "Stadtwerke", "Amazon EU", "Apotheke am Markt", "Shell", "IKEA"}

// transactions is n ledger transactions as a tool returns them.
func transactions(n int) []map[string]any {
	r := sampleRand(uint64(1000 + n))
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"id": sampleID("tx", n, i), "date": fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(11), 1+r.IntN(28)),
			"merchant": merchants[r.IntN(len(merchants))], "amount_cents": -(100 + r.IntN(20000)), "currency": "EUR",
			"category": []string{"groceries", "travel", "subscriptions", "utilities", "health"}[r.IntN(5)]}
	}
	return out
}

// searchResults is n web search results as a tool returns them.
func searchResults(n int) []map[string]any {
	r := sampleRand(uint64(2000 + n))
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"title": fmt.Sprintf("Quiet dishwashers tested: %d models compared", 5+r.IntN(20)),
			"url": fmt.Sprintf("https://reviews.example.com/dishwashers/%d", r.IntN(100000)), "snippet": sentences[r.IntN(len(sentences))]}
	}
	return out
}

// TokenCounter counts a conversation's tokens as the provider does (gemini.Model).
type TokenCounter interface {
	CountTokens(ctx context.Context, msgs []steward.Message) (int, error)
}

// SampleCount is one sample's estimate against the provider's count.
type SampleCount struct {
	ID       string  `json:"id"`
	Class    string  `json:"class"`
	Chars    int     `json:"chars"`
	Count    int     `json:"count"`
	Estimate int     `json:"estimate"`
	ErrorPct float64 `json:"error_pct"`
}

// ClassError is a class's estimate error: mean and max absolute relative error, in percent.
type ClassError struct {
	Class    string  `json:"class"`
	Samples  int     `json:"samples"`
	MAEPct   float64 `json:"mae_pct"`
	MaxPct   float64 `json:"max_error_pct"`
	Suggest  float64 `json:"mae_pct_suggested_rates"`
	Estimate int     `json:"estimate_total"`
	Count    int     `json:"count_total"`
}

// Calibration is a calibration run's report.
type Calibration struct {
	Model    string           `json:"model"`
	Fixtures string           `json:"fixtures"`
	Rates    agent.TokenRates `json:"rates"`
	Classes  []ClassError     `json:"classes"`
	// SuggestedRates are the character rates the counts suggest (framing kept): prose from the
	// prose samples, then JSON from the JSON samples with their prose at that rate.
	SuggestedRates agent.TokenRates `json:"suggested_rates"`
	Samples        []SampleCount    `json:"samples"`
}

// measure splits a conversation into what the estimator sees: prose and JSON characters, and
// the framing tokens.
func measure(rates agent.TokenRates, msgs []steward.Message) (proseChars, jsonChars, framing int) {
	for _, m := range msgs {
		framing += rates.PerMessage
		for _, p := range m.Parts {
			framing += rates.PerPart
			proseChars += utf8.RuneCountInString(p.Text)
			if c := p.ToolCall; c != nil {
				proseChars += utf8.RuneCountInString(c.Name)
				jsonChars += utf8.RuneCountInString(string(c.Args))
			}
			if r := p.ToolResult; r != nil {
				proseChars += utf8.RuneCountInString(r.Name)
				jsonChars += utf8.RuneCountInString(string(r.Output))
			}
		}
	}
	return proseChars, jsonChars, framing
}

func estimate(rates agent.TokenRates, msgs []steward.Message) int {
	n := 0
	for _, m := range msgs {
		n += rates.Message(m)
	}
	return n
}

// Calibrate counts every sample with counter and compares the count with rates' estimate. Any
// failed count fails the calibration: it never reports figures it did not measure.
func Calibrate(ctx context.Context, counter TokenCounter, rates agent.TokenRates, samples []Sample) (Calibration, error) {
	cal := Calibration{Rates: rates}
	if len(samples) == 0 {
		return cal, errors.New("calibrate: no samples")
	}
	for _, s := range samples {
		count, err := counter.CountTokens(ctx, s.Messages)
		if err != nil {
			return cal, fmt.Errorf("calibrate: sample %s: %w", s.ID, err)
		}
		p, j, _ := measure(rates, s.Messages)
		est := estimate(rates, s.Messages)
		cal.Samples = append(cal.Samples, SampleCount{ID: s.ID, Class: s.Class, Chars: p + j, Count: count, Estimate: est,
			ErrorPct: 100 * math.Abs(float64(est-count)) / float64(count)})
	}
	cal.SuggestedRates = suggestRates(rates, samples, cal.Samples)
	for _, class := range []string{ClassProse, ClassJSON} {
		ce := ClassError{Class: class}
		for i, sc := range cal.Samples {
			if sc.Class != class {
				continue
			}
			ce.Samples++
			ce.MAEPct += sc.ErrorPct
			ce.MaxPct = max(ce.MaxPct, sc.ErrorPct)
			ce.Estimate += sc.Estimate
			ce.Count += sc.Count
			ce.Suggest += 100 * math.Abs(float64(estimate(cal.SuggestedRates, samples[i].Messages)-sc.Count)) / float64(sc.Count)
		}
		if ce.Samples > 0 {
			ce.MAEPct /= float64(ce.Samples)
			ce.Suggest /= float64(ce.Samples)
			cal.Classes = append(cal.Classes, ce)
		}
	}
	return cal, nil
}

// suggestRates fits the two character rates to the counts, keeping rates' framing: prose's
// from the prose samples (their characters over their counts less framing), then JSON's from
// the JSON samples (their JSON characters over their counts less framing and their prose at
// the fitted prose rate). A rate the samples cannot fit stays as it was.
func suggestRates(rates agent.TokenRates, samples []Sample, counts []SampleCount) agent.TokenRates {
	out := rates
	var chars, tokens float64
	for i, s := range samples {
		if s.Class == ClassProse {
			p, _, f := measure(rates, s.Messages)
			chars, tokens = chars+float64(p), tokens+float64(counts[i].Count-f)
		}
	}
	if chars > 0 && tokens > 0 {
		out.ProseChars = round2(chars / tokens)
	}
	chars, tokens = 0, 0
	for i, s := range samples {
		if s.Class == ClassJSON {
			p, j, f := measure(rates, s.Messages)
			chars, tokens = chars+float64(j), tokens+float64(counts[i].Count-f)-float64(p)/out.ProseChars
		}
	}
	if chars > 0 && tokens > 0 {
		out.JSONChars = round2(chars / tokens)
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// Print writes the calibration table.
func (cal Calibration) Print(w io.Writer) {
	fmt.Fprintf(w, "token estimate against %s countTokens (%s)\n", cal.Model, cal.Fixtures)
	fmt.Fprintf(w, "rates: prose %.2f chars/token, json %.2f chars/token\n", cal.Rates.ProseChars, cal.Rates.JSONChars)
	fmt.Fprintf(w, "%-6s %7s %8s %8s %10s %10s\n", "class", "samples", "MAE %", "max %", "estimated", "counted")
	for _, c := range cal.Classes {
		fmt.Fprintf(w, "%-6s %7d %8.1f %8.1f %10d %10d\n", c.Class, c.Samples, c.MAEPct, c.MaxPct, c.Estimate, c.Count)
	}
	fmt.Fprintf(w, "suggested rates: prose %.2f, json %.2f chars/token (MAE with them:", cal.SuggestedRates.ProseChars, cal.SuggestedRates.JSONChars)
	for _, c := range cal.Classes {
		fmt.Fprintf(w, " %s %.1f %%", c.Class, c.Suggest)
	}
	fmt.Fprintf(w, "); to use them: STEWARD_TOKEN_RATES=%g:%g\n", cal.SuggestedRates.ProseChars, cal.SuggestedRates.JSONChars)
}

// WriteJSON writes the calibration report to path.
func (cal Calibration) WriteJSON(path string) error {
	b, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write calibration report: %w", err)
	}
	return nil
}

// ErrNotCalibrated is the error of a calibration without recorded counts and without a key.
var ErrNotCalibrated = errors.New("the token estimate is not calibrated")

// CountCounter is the Gemini countTokens of cfg's model through dir's CountFixtureFile: with
// record, the real API (it needs GEMINI_API_KEY) with every count recorded to the file; else the
// file replayed offline, sending nothing (no file: ErrNotCalibrated, saying how to record it).
func CountCounter(ctx context.Context, cfg config.Config, dir string, record bool) (*gemini.Model, string, error) {
	path := filepath.Join(dir, CountFixtureFile)
	mode, key := fixture.Replay, "replay-sends-no-key"
	if record {
		if cfg.GeminiAPIKey == "" {
			return nil, path, errors.New("--calibrate --record needs GEMINI_API_KEY: it records the real countTokens")
		}
		mode, key = fixture.Record, cfg.GeminiAPIKey
	} else if _, err := os.Stat(path); err != nil {
		return nil, path, fmt.Errorf("%w: %s holds no recorded countTokens calls; calibration needs one recorded run: GEMINI_API_KEY=… steward eval --calibrate --record", ErrNotCalibrated, path)
	}
	t, err := fixture.Open(path, mode, nil)
	if err != nil {
		return nil, path, err
	}
	m, err := gemini.New(ctx, gemini.Config{APIKey: key, BaseURL: cfg.GeminiBaseURL, Model: cfg.Model, HTTPClient: t.Client()})
	return m, path, err
}
