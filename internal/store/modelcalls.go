package store

import (
	"context"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// ModelCalls is the owner's model calls made outside their turns (memory's fact extraction
// and summaries, migration 00052): each one's cost counts against the owner's daily budget
// and the deployment's cap, as a turn's does.
type ModelCalls struct{ *conn }

// Record stores a call of kind ("extract_facts" or "consolidate") answered by model, priced;
// its cost is added to the owner's day when the transaction commits.
func (t ModelCalls) Record(ctx context.Context, kind, model string, usage steward.Usage, costMicros int64) error {
	return notFoundOrNil("record model call", t.q.RecordModelCall(ctx, db.RecordModelCallParams{OwnerID: t.ownerID,
		Kind: kind, Model: model, InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, CostMicros: costMicros}))
}
