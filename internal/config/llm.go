package config

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// LLM is the language models Steward calls: Gemini's and an OpenAI-compatible API's keys and
// endpoints, the models and their fallback chain, the operator's prices, a fixture file of
// recorded calls, and the bound on one model call.
type LLM struct {
	// GeminiAPIKey enables Gemini; without it the offline demo model answers.
	GeminiAPIKey string
	// GeminiBaseURL overrides the Gemini endpoint (gateways, test fakes).
	GeminiBaseURL string
	// Model is the Gemini model name (STEWARD_MODEL).
	Model string
	// FastModel is the Gemini model for background work: memory fact extraction and
	// conversation summaries (STEWARD_FAST_MODEL).
	FastModel string
	// Models is the fallback chain of turns (STEWARD_MODELS), first preferred; nil keeps the
	// single Gemini model (Model). When set, Model is not used for turns.
	Models []ModelRef
	// OpenAIAPIKey and OpenAIBaseURL reach an OpenAI-compatible chat completions API
	// (OPENAI_API_KEY, OPENAI_BASE_URL: OpenAI when unset, or OpenRouter, Ollama, vLLM).
	OpenAIAPIKey  string
	OpenAIBaseURL string
	// GeminiAPIKeyParam and OpenAIAPIKeyParam are where the keys are on Lambda, read once at
	// cold start: an SSM parameter name (SecureString) or a Secrets Manager secret's ARN
	// (GEMINI_API_KEY_SSM, OPENAI_API_KEY_SSM).
	GeminiAPIKeyParam, OpenAIAPIKeyParam string
	// ModelPrices are the operator's prices (STEWARD_MODEL_PRICES), by model name: they
	// extend and override Steward's list prices (internal/trace). With Gemini, a model with
	// no price refuses to start.
	ModelPrices map[string]ModelPrice
	// ModelFixtures is a fixture file of model API calls (STEWARD_MODEL_FIXTURES): with
	// ModelFixturesMode "record" every Gemini and OpenAI-compatible call is sent and saved to
	// it; with "replay" (the default) calls are answered from it, offline, and one that was
	// not recorded fails (internal/llm/fixture). Replay needs no API key.
	ModelFixtures     string
	ModelFixturesMode string
	// ModelTimeout bounds one model call of a turn, retries and fallbacks included; in a
	// fallback chain each model but the last gets its share (STEWARD_MODEL_TIMEOUT, 2m).
	ModelTimeout time.Duration
}

// Default Gemini models, when STEWARD_MODEL and STEWARD_FAST_MODEL are unset: the newest GA
// Flash and Flash-Lite models on https://ai.google.dev/gemini-api/docs/models, neither with a
// shutdown date on https://ai.google.dev/gemini-api/docs/deprecations (both read 2026-11-30;
// gemini-2.5-flash, the former default, is at its end of life there).
const (
	DefaultModel     = "gemini-3.8-flash"
	DefaultFastModel = "gemini-3.5-flash-lite"
)

// Providers of STEWARD_MODELS entries.
const (
	ProviderGemini = "gemini"
	ProviderOpenAI = "openai"
)

// ModelRef is one entry of STEWARD_MODELS: provider:model.
type ModelRef struct {
	Provider, Name string
}

// ModelPrice is an operator's price for a model, in US dollars per million tokens.
type ModelPrice struct {
	Input, Output, CachedInput float64
	// AudioInput prices audio input tokens (the fourth field; zero: at Input), §18.
	AudioInput float64
}

// pricesFormat is how STEWARD_MODEL_PRICES is written, for error messages.
const pricesFormat = "must be model=input:output[:cached[:audio_input]], USD per 1M tokens, comma-separated (e.g. gemini-3.8-flash=0.75:3.75:0.075)"

// llm reads the LLM area: a recording needs its file, and every model named needs its
// provider's key.
func (r *reader) llm() LLM {
	m := LLM{
		GeminiAPIKey:      r.str("GEMINI_API_KEY", ""),
		GeminiBaseURL:     r.str("GEMINI_BASE_URL", ""),
		Model:             r.str("STEWARD_MODEL", DefaultModel),
		FastModel:         r.str("STEWARD_FAST_MODEL", DefaultFastModel),
		Models:            r.models("STEWARD_MODELS"),
		OpenAIAPIKey:      r.str("OPENAI_API_KEY", ""),
		OpenAIBaseURL:     r.str("OPENAI_BASE_URL", ""),
		GeminiAPIKeyParam: r.str("GEMINI_API_KEY_SSM", ""),
		OpenAIAPIKeyParam: r.str("OPENAI_API_KEY_SSM", ""),
		ModelPrices:       r.prices("STEWARD_MODEL_PRICES"),
		ModelFixtures:     r.str("STEWARD_MODEL_FIXTURES", ""),
		ModelFixturesMode: r.oneOf("STEWARD_MODEL_FIXTURES_MODE", "replay", "replay", "record"),
		ModelTimeout:      r.duration("STEWARD_MODEL_TIMEOUT", 2*time.Minute),
	}
	r.httpURL("GEMINI_BASE_URL", m.GeminiBaseURL)
	r.httpURL("OPENAI_BASE_URL", m.OpenAIBaseURL)
	if m.ModelFixturesMode == "record" && m.ModelFixtures == "" {
		r.fail("STEWARD_MODEL_FIXTURES_MODE", m.ModelFixturesMode, "needs STEWARD_MODEL_FIXTURES, the file to record to")
	}
	r.modelKeys(m)
	return m
}

// modelKeys checks that every model named has its provider's key (or, for OpenAI, a local
// server); replaying needs none.
func (r *reader) modelKeys(m LLM) {
	for _, ref := range m.Models {
		switch {
		case m.Replaying():
		case ref.Provider == ProviderGemini && m.GeminiAPIKey == "" && m.GeminiAPIKeyParam == "":
			r.fail("STEWARD_MODELS", ref.Provider+":"+ref.Name, "names a Gemini model but GEMINI_API_KEY is not set")
		case ref.Provider == ProviderOpenAI && m.OpenAIAPIKey == "" && m.OpenAIAPIKeyParam == "" && m.OpenAIBaseURL == "":
			r.fail("STEWARD_MODELS", ref.Provider+":"+ref.Name, "names an OpenAI model but OPENAI_API_KEY is not set (a local server without a key needs OPENAI_BASE_URL)")
		}
	}
}

// Replaying reports whether model calls are answered from a fixture file, offline.
func (m LLM) Replaying() bool {
	return m.ModelFixtures != "" && m.ModelFixturesMode == "replay"
}

// prices parses model=input:output[:cached] entries, comma-separated. Without a cached price,
// cached input costs the full input price: no discount is assumed that was not stated.
func (r *reader) prices(name string) map[string]ModelPrice {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	out := map[string]ModelPrice{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		model, nums, ok := strings.Cut(entry, "=")
		model = strings.TrimSpace(model)
		f := strings.Split(nums, ":")
		if !ok || model == "" || len(f) < 2 || len(f) > 4 {
			r.fail(name, entry, pricesFormat)
			continue
		}
		var p [4]float64
		bad := false
		for i, s := range f {
			x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				bad = true
			}
			p[i] = x
		}
		if len(f) == 2 {
			p[2] = p[0]
		}
		if _, dup := out[model]; dup {
			r.fail(name, entry, "prices "+model+" twice")
			continue
		}
		if bad {
			r.fail(name, entry, "has a price that is not a non-negative number; "+pricesFormat)
			continue
		}
		out[model] = ModelPrice{Input: p[0], Output: p[1], CachedInput: p[2], AudioInput: p[3]}
	}
	return out
}

// models parses provider:model entries, comma-separated, e.g.
// gemini:gemini-3.8-flash,openai:gpt-5-mini. A model name may itself hold colons and slashes
// (an Ollama tag, an OpenRouter route): only the first colon separates the provider.
func (r *reader) models(name string) []ModelRef {
	v := r.str(name, "")
	if v == "" {
		return nil
	}
	var out []ModelRef
	seen := map[ModelRef]bool{}
	for _, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		provider, model, ok := strings.Cut(entry, ":")
		ref := ModelRef{Provider: strings.ToLower(strings.TrimSpace(provider)), Name: strings.TrimSpace(model)}
		switch {
		case !ok || ref.Name == "" || (ref.Provider != ProviderGemini && ref.Provider != ProviderOpenAI):
			r.fail(name, entry, "must be provider:model entries, comma-separated, with provider gemini or openai (e.g. gemini:gemini-3.8-flash,openai:gpt-5-mini)")
			continue
		case seen[ref]:
			r.fail(name, entry, "lists the same model twice")
			continue
		}
		seen[ref] = true
		out = append(out, ref)
	}
	return out
}
