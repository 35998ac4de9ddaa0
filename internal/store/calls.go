package store

import (
	"context"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// RecordCall adds a call to the tool-call journal.
func (t Journal) RecordCall(ctx context.Context, c steward.CallRecord) error {
	_, err := t.q.InsertToolCall(ctx, db.InsertToolCallParams{
		OwnerID: t.ownerID, TurnID: c.TurnID, CallID: c.CallID, Tool: c.Tool, Kind: string(c.Kind),
		Args: jsonOrEmpty(c.Args), ArgsHash: c.ArgsHash, Status: string(c.Status),
		DecidedBy: ptrString(c.DecidedBy), Result: c.Result,
	})
	return notFoundOrNil("record call "+c.CallID, err)
}

// Calls lists a turn's journal.
func (t Journal) Calls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error) {
	rows, err := t.q.ListToolCalls(ctx, db.ListToolCallsParams{OwnerID: t.ownerID, TurnID: turnID})
	if err != nil {
		return nil, fmt.Errorf("list calls: %w", err)
	}
	return toCalls(rows), nil
}

// PendingCalls lists every call of the owner waiting for a decision.
func (t Journal) PendingCalls(ctx context.Context) ([]steward.CallRecord, error) {
	rows, err := t.q.ListPendingToolCalls(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list pending calls: %w", err)
	}
	return toCalls(rows), nil
}

// UpdateCall applies u; ErrConflict when the call is not in u.From.
func (t Journal) UpdateCall(ctx context.Context, u steward.CallUpdate) error {
	n, err := t.q.UpdateToolCall(ctx, db.UpdateToolCallParams{
		OwnerID: t.ownerID, TurnID: u.TurnID, CallID: u.CallID, FromStatus: string(u.From), Status: string(u.To),
		Result: u.Result, DecidedBy: ptrString(u.DecidedBy), DecisionMessage: ptrString(u.Message),
	})
	if err != nil {
		return notFound("update call "+u.CallID, err)
	}
	if n == 0 {
		return fmt.Errorf("update call %s %s→%s: %w", u.CallID, u.From, u.To, ErrConflict)
	}
	return nil
}

// MarkUnknownCalls turns calls left executing (a crash mid-call) into unknown and returns them.
func (t Journal) MarkUnknownCalls(ctx context.Context, turnID uuid.UUID) ([]steward.CallRecord, error) {
	rows, err := t.q.MarkUnknownToolCalls(ctx, db.MarkUnknownToolCallsParams{OwnerID: t.ownerID, TurnID: turnID})
	if err != nil {
		return nil, fmt.Errorf("mark unknown calls: %w", err)
	}
	return toCalls(rows), nil
}

func toCalls(rows []db.ToolCall) []steward.CallRecord {
	out := make([]steward.CallRecord, len(rows))
	for i, r := range rows {
		out[i] = steward.CallRecord{TurnID: r.TurnID, CallID: r.CallID, Tool: r.Tool, Kind: steward.ToolKind(r.Kind),
			Args: r.Args, ArgsHash: r.ArgsHash, Status: steward.CallStatus(r.Status), DecidedBy: str(r.DecidedBy),
			Message: str(r.DecisionMessage), Result: r.Result, CreatedAt: r.CreatedAt}
	}
	return out
}

// jsonOrEmpty substitutes {} for empty JSON.
func jsonOrEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// notFoundOrNil wraps err like notFound, and passes nil through.
func notFoundOrNil(what string, err error) error {
	if err == nil {
		return nil
	}
	return notFound(what, err)
}
