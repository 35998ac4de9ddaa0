package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trace"
)

// ErrUnpriced is matched (errors.Is) by the error of a start refused because a model has no
// price: its calls could not be counted against the daily budgets and the deployment's cap.
var ErrUnpriced = errors.New("a model has no price")

// Prices is cfg's price table: Steward's list prices (internal/trace) with the operator's
// STEWARD_MODEL_PRICES on top.
func Prices(cfg config.Config) *trace.Prices {
	op := make(map[string]trace.Price, len(cfg.ModelPrices))
	for m, p := range cfg.ModelPrices {
		op[m] = trace.Price{Input: p.Input, CachedInput: p.CachedInput, Output: p.Output, AudioInput: p.AudioInput}
	}
	return trace.NewPrices(op, nil)
}

// ModelUse is a model cfg calls and the variable that names it.
type ModelUse struct{ Variable, Model string }

// Models returns the models cfg calls: every model of STEWARD_MODELS when it is set, else
// STEWARD_MODEL with Gemini; STEWARD_FAST_MODEL with Gemini; without either, the offline demo
// model (free by name); and the voice models (§18).
func Models(cfg config.Config) []ModelUse {
	var out []ModelUse
	for _, m := range cfg.Models {
		out = append(out, ModelUse{"STEWARD_MODELS", m.Name})
	}
	if cfg.GeminiAPIKey != "" {
		if len(cfg.Models) == 0 {
			out = append(out, ModelUse{"STEWARD_MODEL", cfg.Model})
		}
		out = append(out, ModelUse{"STEWARD_FAST_MODEL", cfg.FastModel})
	}
	if len(out) == 0 {
		out = append(out, ModelUse{"model", demo.Name})
	}
	transcribe, speak := voiceModels(cfg)
	if transcribe != "" {
		out = append(out, ModelUse{"STEWARD_VOICE_TRANSCRIBE_MODEL", transcribe})
	}
	if speak != "" {
		out = append(out, ModelUse{"STEWARD_VOICE_SPEECH_MODEL", speak})
	}
	return out
}

// CheckPrices fails when a model cfg calls has no price, naming the model and how to price
// it. Limits fail closed: a model Steward cannot price does not run, rather than run free.
func CheckPrices(cfg config.Config) error {
	prices := Prices(cfg)
	var errs []error
	for _, m := range Models(cfg) {
		if _, ok := prices.Lookup(m.Model); !ok {
			errs = append(errs, unpriced{variable: m.Variable, model: m.Model, priced: prices.Models()})
		}
	}
	return errors.Join(errs...)
}

// unpriced is the error of one model without a price.
type unpriced struct {
	variable, model string
	priced          []string
}

func (e unpriced) Error() string {
	return fmt.Sprintf("%s=%s has no price, so its cost could not count against the budgets: set STEWARD_MODEL_PRICES=%s=INPUT:OUTPUT[:CACHED] (USD per 1M tokens), or use a priced model (%s)",
		e.variable, e.model, e.model, strings.Join(e.priced, ", "))
}

func (unpriced) Is(target error) bool { return target == ErrUnpriced }

// priceCalls prices a turn's model calls (agent.Runner.Price) by the model each response
// names. A response naming a model without a price — an alias resolved, a deprecated model
// routed to its replacement — is charged at the configured model's price and logged: never
// free. The configured model has a price: New refused to start otherwise (CheckPrices).
func priceCalls(prices *trace.Prices, configured string, log zerolog.Logger) func(string, steward.Usage) int64 {
	return func(model string, u steward.Usage) int64 {
		if c, ok := prices.Cost(model, u); ok {
			return c
		}
		c, _ := prices.Cost(configured, u)
		log.Warn().Str("model", model).Str("priced_as", configured).
			Msg("the model's answer names a model without a price: charged at the configured model's price; set STEWARD_MODEL_PRICES for it")
		return c
	}
}
