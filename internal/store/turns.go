package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/db"
)

// CreateTurn starts a running turn in a conversation.
func (t Turns) Create(ctx context.Context, conversationID uuid.UUID, trigger steward.Trigger, model string, now time.Time, lease time.Duration) (steward.Turn, error) {
	r, err := t.q.CreateTurn(ctx, db.CreateTurnParams{OwnerID: t.ownerID, ConversationID: conversationID,
		Trigger: string(trigger), Model: model, Now: now, LeaseSeconds: lease.Seconds(), Holder: t.holder})
	if err != nil {
		return steward.Turn{}, notFound("create turn", err)
	}
	return toTurn(r)
}

// GetTurn reads one turn.
func (t Turns) Get(ctx context.Context, id uuid.UUID) (steward.Turn, error) {
	r, err := t.q.GetTurn(ctx, db.GetTurnParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return steward.Turn{}, notFound("turn "+id.String(), err)
	}
	return toTurn(r)
}

// ListTurns lists turns newest first; status "" means any.
func (t Turns) List(ctx context.Context, status steward.Status, limit int) ([]steward.Turn, error) {
	var rows []db.Turn
	var err error
	if status == "" {
		rows, err = t.q.ListTurns(ctx, db.ListTurnsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	} else {
		rows, err = t.q.ListTurnsByStatus(ctx, db.ListTurnsByStatusParams{OwnerID: t.ownerID, Status: string(status), MaxRows: int32(limit)})
	}
	if err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	return toTurns(rows)
}

func toTurns(rows []db.Turn) ([]steward.Turn, error) {
	out := make([]steward.Turn, 0, len(rows))
	for _, r := range rows {
		turn, err := toTurn(r)
		if err != nil {
			return nil, err
		}
		out = append(out, turn)
	}
	return out, nil
}

// ConversationTurns lists the turns of one conversation, oldest first, at most limit.
func (t Turns) InConversation(ctx context.Context, conversationID uuid.UUID, limit int) ([]steward.Turn, error) {
	rows, err := t.q.ListConversationTurns(ctx, db.ListConversationTurnsParams{OwnerID: t.ownerID, ConversationID: conversationID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list turns of conversation %s: %w", conversationID, err)
	}
	return toTurns(rows)
}

// Save writes a running or resuming turn's new status, state, usage and outcome. It fails
// with ErrConflict when the turn's version moved on (someone else saved it first).
func (t Turns) Save(ctx context.Context, turn steward.Turn) (steward.Turn, error) {
	return t.save(ctx, t.q, turn)
}

// Finish is Save deferred: in the turn loop's pipelined transaction (pipeline.go) it travels
// with the next statement or COMMIT, whose failure carries its error — ErrConflict for a
// lost version — and fails the transaction all the same.
func (t Turns) Finish(ctx context.Context, turn steward.Turn) (steward.Turn, error) {
	return t.save(ctx, db.New(renamed{DBTX: t.tx, name: "FinishTurn"}), turn)
}

func (t Turns) save(ctx context.Context, q *db.Queries, turn steward.Turn) (steward.Turn, error) {
	var state []byte
	if turn.State != nil {
		var err error
		if state, err = json.Marshal(turn.State); err != nil {
			return turn, fmt.Errorf("encode turn state: %w", err)
		}
	}
	n, err := q.SaveTurn(ctx, db.SaveTurnParams{
		OwnerID: t.ownerID, ID: turn.ID, Version: turn.Version, Status: string(turn.Status), State: state,
		Iterations: int32(turn.Iterations), InputTokens: turn.Usage.InputTokens, OutputTokens: turn.Usage.OutputTokens,
		CachedTokens: turn.Usage.CachedTokens, CostMicros: turn.CostMicros, Model: turn.Model,
		Answer: ptrString(turn.Answer), Error: ptrString(turn.Error), ExpiresAt: turn.ExpiresAt, Taint: turn.Taint,
	})
	if err != nil {
		return turn, notFound("save turn", err)
	}
	if n == 0 {
		return turn, fmt.Errorf("save turn %s: %w", turn.ID, ErrConflict)
	}
	turn.Version++
	return turn, nil
}

// renamed runs sqlc's statements under another query name (their first line), so the pipe
// treats them as that name: Turns.Finish is SaveTurn, deferred.
type renamed struct {
	db.DBTX
	name string
}

func (r renamed) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if old := queryName(sql); old != "" {
		sql = "-- name: " + r.name + strings.TrimPrefix(sql, "-- name: "+old)
	}
	return r.DBTX.Exec(ctx, sql, args...)
}

// Claim moves a suspended turn to resuming in one conditional update and returns it with
// its state, leased until now+lease. Exactly one caller wins; the others get ErrConflict (or
// ErrNotFound). now is the caller's clock: it decides expiry and lapsed leases.
func (t Turns) Claim(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (steward.Turn, error) {
	r, err := t.q.ClaimTurn(ctx, db.ClaimTurnParams{OwnerID: t.ownerID, ID: id, Now: now, LeaseSeconds: lease.Seconds(), Holder: t.holder})
	if err != nil {
		err = notFound("claim turn "+id.String(), err)
		return steward.Turn{}, err
	}
	return toTurn(r)
}

// Cancel records the owner's request that a turn stop, at now (their clock): a suspended or
// continuing turn (or a resuming one whose lease lapsed) is cancelled at once; a running or
// resuming one keeps its status and version and ends cancelled at its loop's next step
// boundary. An ended turn, or none, is ErrNotFound (the caller reads it to say which).
func (t Turns) Cancel(ctx context.Context, id uuid.UUID, now time.Time) (steward.Turn, error) {
	r, err := t.q.CancelTurn(ctx, db.CancelTurnParams{OwnerID: t.ownerID, ID: id, Now: now})
	if err != nil {
		return steward.Turn{}, notFound("cancel turn "+id.String(), err)
	}
	return toTurn(r)
}

// CancelRequested reports whether the owner asked the turn to stop (the loop's check).
// RenewLease extends a running or resuming turn's lease to now+lease (never shortening it) and
// reports, as CancelRequested, whether the owner asked it to stop; an ended turn is
// ErrNotFound.
func (t Turns) RenewLease(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (bool, error) {
	ok, err := t.q.RenewTurnLease(ctx, db.RenewTurnLeaseParams{OwnerID: t.ownerID, ID: id, Now: now, LeaseSeconds: lease.Seconds(), Holder: t.holder})
	if err != nil {
		return false, notFound("renew lease of turn "+id.String(), err)
	}
	return ok, nil
}

// LapsedResuming lists the owner's resuming turns whose lease lapsed at now (at most 20).
func (t Sweep) LapsedResuming(ctx context.Context, now time.Time) ([]uuid.UUID, error) {
	ids, err := t.q.LapsedResumingTurns(ctx, db.LapsedResumingTurnsParams{OwnerID: t.ownerID, Now: now})
	if err != nil {
		return nil, fmt.Errorf("lapsed resuming turns: %w", err)
	}
	return ids, nil
}

func (t Turns) CancelRequested(ctx context.Context, id uuid.UUID) (bool, error) {
	ok, err := t.q.TurnCancelRequested(ctx, db.TurnCancelRequestedParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return false, notFound("turn "+id.String(), err)
	}
	return ok, nil
}

// PendingWrites counts the owner's writes waiting for a decision, and their turns: the
// pending calls of suspended turns that have not expired at now.
func (t Turns) PendingWrites(ctx context.Context, now time.Time) (writes, turns int, err error) {
	r, err := t.q.CountPendingWrites(ctx, db.CountPendingWritesParams{OwnerID: t.ownerID, Now: now})
	if err != nil {
		return 0, 0, fmt.Errorf("count pending writes: %w", err)
	}
	return int(r.Writes), int(r.Turns), nil
}

// Expire moves the owner's suspended turns whose expiry is at or before now to expired.
func (t Sweep) Expire(ctx context.Context, now time.Time) (int64, error) {
	n, err := t.q.ExpireTurns(ctx, db.ExpireTurnsParams{OwnerID: t.ownerID, Now: now})
	if err != nil {
		return 0, fmt.Errorf("expire turns: %w", err)
	}
	return n, nil
}

// FailStale fails the owner's turns still running and last updated before before: their
// process died.
func (t Sweep) FailStale(ctx context.Context, now, before time.Time) (int64, error) {
	n, err := t.q.FailStaleTurns(ctx, db.FailStaleTurnsParams{OwnerID: t.ownerID, Before: before, Now: now})
	if err != nil {
		return 0, fmt.Errorf("fail stale turns: %w", err)
	}
	return n, nil
}

// ReleaseHolder ends, at now, the leases of the running and resuming turns that holder held:
// its process is gone, and the sweep then fails or recovers them at once.
func (t Sweep) ReleaseHolder(ctx context.Context, holder string, now time.Time) (int64, error) {
	n, err := t.q.ReleaseHolderTurns(ctx, db.ReleaseHolderTurnsParams{OwnerID: t.ownerID, Holder: holder, Now: now})
	if err != nil {
		return 0, fmt.Errorf("release turns of %s: %w", holder, err)
	}
	return n, nil
}

func toTurn(r db.Turn) (steward.Turn, error) {
	turn := steward.Turn{
		ID: r.ID, OwnerID: r.OwnerID, ConversationID: r.ConversationID, Trigger: steward.Trigger(r.Trigger),
		Status: steward.Status(r.Status), Version: r.Version, LeaseUntil: r.LeaseUntil, Iterations: int(r.Iterations),
		Usage:      steward.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens},
		CostMicros: r.CostMicros, Model: r.Model, Answer: str(r.Answer), Error: str(r.Error),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ExpiresAt: r.ExpiresAt, CancelRequestedAt: r.CancelRequestedAt,
		Taint: r.Taint,
	}
	if len(r.State) > 0 {
		turn.State = new(steward.State)
		if err := json.Unmarshal(r.State, turn.State); err != nil {
			return turn, fmt.Errorf("decode state of turn %s: %w", r.ID, err)
		}
		if turn.State.SchemaVersion != steward.StateSchemaVersion {
			return turn, fmt.Errorf("turn %s: state schema version %d, this build reads %d", r.ID, turn.State.SchemaVersion, steward.StateSchemaVersion)
		}
	}
	return turn, nil
}

// StateSize is the stored size in bytes of a turn's suspended state (for benchmarks and
// doctor).
func (t Turns) StateSize(ctx context.Context, id uuid.UUID) (int, error) {
	var n *int
	err := t.tx.QueryRow(ctx, `SELECT pg_column_size(state) FROM turns WHERE owner_id = $1 AND id = $2`, t.ownerID, id).Scan(&n)
	if err != nil || n == nil {
		return 0, notFound("state size", err)
	}
	return *n, nil
}

// ClaimContinuing moves a continuing turn back to running in one conditional update and
// returns it with its state, leased until now+lease. Exactly one caller wins; the others get
// ErrConflict (or ErrNotFound).
func (t Turns) ClaimContinuing(ctx context.Context, id uuid.UUID, now time.Time, lease time.Duration) (steward.Turn, error) {
	r, err := t.q.ClaimContinuingTurn(ctx, db.ClaimContinuingTurnParams{OwnerID: t.ownerID, ID: id, Now: now, LeaseSeconds: lease.Seconds(), Holder: t.holder})
	if err != nil {
		return steward.Turn{}, notFound("claim continuing turn "+id.String(), err)
	}
	return toTurn(r)
}
