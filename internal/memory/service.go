package memory

import (
	"context"
	"time"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Service is an owner's memory: recall for the loop (it implements agent.Memory), the
// owner's API (facts, search), ingestion of one exchange (for the Worker) and
// consolidation. Zero tuning fields take the defaults named on them. It is safe for
// concurrent use once built.
type Service struct {
	Store    *store.Store
	Embedder Embedder
	// Model is the fast model that extracts facts from finished exchanges (through a forced
	// record_facts call) and summarises old conversations; nil means neither happens.
	Model llm.Model

	// RecallChunks is how many nearest chunks a recall considers (8).
	RecallChunks int
	// RecallFacts is how many keyword-matched facts a recall considers (8).
	RecallFacts int
	// RecallTokens is the budget of the memory block, in approximate tokens (1500).
	RecallTokens int
	// MaxDistance leaves out chunks farther than this cosine distance from the message
	// (0: DefaultMaxDistance; negative: no cutoff, the nearest whatever their distance).
	// STEWARD_MEMORY_MAX_DISTANCE sets it.
	MaxDistance float64

	// DuplicateDistance: a chunk with a newer chunk closer than this is a near-duplicate
	// and is superseded by Consolidate (0.05, i.e. cosine similarity above 0.95).
	DuplicateDistance float64
	// SummarizeAfter: a conversation whose memory is older than this is summarised (30 days).
	SummarizeAfter time.Duration
	// SummarizeMin is the fewest chunks worth summarising (4).
	SummarizeMin int

	// Price is what a model call outside a turn cost, in millionths of a dollar, by the model
	// that answered (app's pricing, as a turn's calls are priced); each call is recorded for
	// the owner (store.Memory.RecordModelCall) and counts against their daily budget. Nil
	// prices calls at 0 (tests).
	Price func(model string, u steward.Usage) int64

	// Now is the clock (nil: the system clock).
	Now steward.Clock

	queries queryCache // recent messages' embeddings, per owner
}

var _ agent.Memory = (*Service)(nil)

// New returns a Service with default tuning. model may be nil.
func New(st *store.Store, e Embedder, model llm.Model) *Service {
	return &Service{Store: st, Embedder: e, Model: model}
}

func orDefault[T int | float64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// DefaultMaxDistance is the recall's cutoff when MaxDistance is 0: a chunk farther than
// this cosine distance from the message is not recalled (a saved document would otherwise
// be recalled into, and taint, every turn). Measured with the offline embedder on the
// labelled set of cutoff_test.go (14 related, 252 unrelated pairs): 0.90 keeps every related
// pair (the farthest, a webhook event wrapped in its instructions, at 0.89) and 99 of the
// unrelated ones; 0.80 would lose that one and keep 41. See docs/CONFIGURATION.md,
// STEWARD_MEMORY_MAX_DISTANCE.
const DefaultMaxDistance = 0.90

// spend is a model call made for an owner outside a turn, to record with what it wrote.
type spend struct {
	kind  string
	model string
	usage steward.Usage
}

// spent is resp as a spend of kind.
func (s *Service) spent(kind string, resp llm.Response) *spend {
	model := resp.Model
	if model == "" {
		model = s.Model.Name()
	}
	return &spend{kind: kind, model: model, usage: resp.Usage}
}

// record stores sp (nil: nothing) in tx, priced.
func (s *Service) record(ctx context.Context, tx *store.Tx, sp *spend) error {
	if sp == nil {
		return nil
	}
	var cost int64
	if s.Price != nil {
		cost = s.Price(sp.model, sp.usage)
	}
	return tx.ModelCalls.Record(ctx, sp.kind, sp.model, sp.usage, cost)
}
