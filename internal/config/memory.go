package config

import (
	"strconv"
	"strings"
)

// Memory is what a turn's model is given of the past: the context budget a conversation is
// summarised to fit, how its tokens are estimated, and how near a memory must be to be
// recalled.
type Memory struct {
	// ContextTokens is the context budget: a model request's estimated input tokens, beyond
	// which the oldest turns of a conversation are summarised (internal/agent/context.go)
	// (STEWARD_CONTEXT_TOKENS).
	ContextTokens int
	// TokenRates are the context budget's characters per token of prose and of JSON
	// (STEWARD_TOKEN_RATES=PROSE:JSON, as `steward eval --calibrate` suggests them); zero
	// keeps agent.DefaultRates.
	TokenRates TokenRates
	// MemoryMaxDistance is memory recall's cutoff (STEWARD_MEMORY_MAX_DISTANCE): a chunk
	// farther than this cosine distance from the message is not recalled; 0 (unset) keeps
	// memory.DefaultMaxDistance.
	MemoryMaxDistance float64
}

// TokenRates are characters per token of prose and of JSON.
type TokenRates struct {
	Prose, JSON float64
}

// memory reads the Memory area.
func (r *reader) memory() Memory {
	return Memory{
		ContextTokens:     r.intIn("STEWARD_CONTEXT_TOKENS", 60000, 4000, 2000000),
		TokenRates:        r.tokenRates("STEWARD_TOKEN_RATES"),
		MemoryMaxDistance: r.floatIn("STEWARD_MEMORY_MAX_DISTANCE", 0.05, 2),
	}
}

// tokenRates reads PROSE:JSON, two characters-per-token rates from 1 to 10; empty is none.
func (r *reader) tokenRates(name string) TokenRates {
	v := r.str(name, "")
	if v == "" {
		return TokenRates{}
	}
	p, j, ok := strings.Cut(v, ":")
	prose, err1 := strconv.ParseFloat(strings.TrimSpace(p), 64)
	json, err2 := strconv.ParseFloat(strings.TrimSpace(j), 64)
	if !ok || err1 != nil || err2 != nil || !(prose >= 1 && prose <= 10) || !(json >= 1 && json <= 10) {
		r.fail(name, v, "is not PROSE:JSON, two characters-per-token rates from 1 to 10 (e.g. 4:2.5)")
		return TokenRates{}
	}
	return TokenRates{Prose: prose, JSON: json}
}
