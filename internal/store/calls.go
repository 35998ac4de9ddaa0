package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
)

// RecordCall adds a call to the tool-call journal.
func (t Journal) RecordCall(ctx context.Context, c steward.CallRecord) error {
	err := t.q.InsertToolCall(ctx, db.InsertToolCallParams{
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
	var inv []byte
	var executedAt *time.Time
	if u.Inverse != nil {
		b, err := json.Marshal(u.Inverse)
		if err != nil {
			return fmt.Errorf("update call %s: encode inverse: %w", u.CallID, err)
		}
		inv, executedAt = b, &u.At
	}
	n, err := t.q.UpdateToolCall(ctx, db.UpdateToolCallParams{
		OwnerID: t.ownerID, TurnID: u.TurnID, CallID: u.CallID, FromStatus: string(u.From), Status: string(u.To),
		Result: u.Result, DecidedBy: ptrString(u.DecidedBy), DecisionMessage: ptrString(u.Message),
		Inverse: inv, ExecutedAt: executedAt,
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

// Call reads one call of a turn's journal; ErrNotFound when the turn has no such call.
func (t Journal) Call(ctx context.Context, turnID uuid.UUID, callID string) (steward.CallRecord, error) {
	r, err := t.q.GetToolCall(ctx, db.GetToolCallParams{OwnerID: t.ownerID, TurnID: turnID, CallID: callID})
	if err != nil {
		return steward.CallRecord{}, notFound("call "+callID, err)
	}
	return toCall(r), nil
}

// MarkUndone marks a succeeded call with an inverse undone at at by by, once, if it ran at
// or after since; ErrConflict when it does not qualify (Call tells why). Its row lock
// serialises concurrent undos of the call.
func (t Journal) MarkUndone(ctx context.Context, turnID uuid.UUID, callID string, since, at time.Time, by string) (steward.CallRecord, error) {
	r, err := t.q.MarkToolCallUndone(ctx, db.MarkToolCallUndoneParams{OwnerID: t.ownerID, TurnID: turnID, CallID: callID,
		Since: &since, UndoneAt: &at, UndoneBy: &by})
	if errors.Is(err, pgx.ErrNoRows) {
		return steward.CallRecord{}, fmt.Errorf("undo call %s: %w", callID, ErrConflict)
	}
	if err != nil {
		return steward.CallRecord{}, notFound("undo call "+callID, err)
	}
	return toCall(r), nil
}

// NextSeq is the sequence number for an audit event added to a turn after it ran.
func (t Journal) NextSeq(ctx context.Context, turnID uuid.UUID) (int, error) {
	n, err := t.q.NextTurnSeq(ctx, db.NextTurnSeqParams{OwnerID: t.ownerID, TurnID: nullUUID(&turnID)})
	if err != nil {
		return 0, fmt.Errorf("next event seq: %w", err)
	}
	return int(n), nil
}

func toCalls(rows []db.ToolCall) []steward.CallRecord {
	out := make([]steward.CallRecord, len(rows))
	for i, r := range rows {
		out[i] = toCall(r)
	}
	return out
}

func toCall(r db.ToolCall) steward.CallRecord {
	c := steward.CallRecord{TurnID: r.TurnID, CallID: r.CallID, Tool: r.Tool, Kind: steward.ToolKind(r.Kind),
		Args: r.Args, ArgsHash: r.ArgsHash, Status: steward.CallStatus(r.Status), DecidedBy: str(r.DecidedBy),
		Message: str(r.DecisionMessage), Result: r.Result, CreatedAt: r.CreatedAt,
		ExecutedAt: r.ExecutedAt, UndoneAt: r.UndoneAt, UndoneBy: str(r.UndoneBy)}
	if len(r.Inverse) > 0 {
		var inv steward.Inverse
		if json.Unmarshal(r.Inverse, &inv) == nil {
			c.Inverse = &inv
		}
	}
	return c
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
