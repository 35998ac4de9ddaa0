package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// Household is an owner's side of household approvals (migrations/00021_households.sql):
// the calls it files for its household's approval, the votes on its own
// turns (through the reviewed SECURITY DEFINER functions, keyed on app.owner_id), and its
// inbox of requests addressed to it (its own rows, under owner_isolation).
type Household struct{ *conn }

// Request files a suspended turn's pending calls for the approval of the members its
// household's policies name, and returns how many member votes it asked for (0: none
// matched, or the owner is in no household).
func (t Household) Request(ctx context.Context, turnID uuid.UUID, calls []steward.HouseholdCall, expires time.Time) (int, error) {
	t.votes = nil // a vote may change
	b, err := json.Marshal(calls)
	if err != nil {
		return 0, err
	}
	var n int
	if err := t.tx.QueryRow(ctx, householdRequestSQL, turnID, b, expires).Scan(&n); err != nil {
		return 0, fmt.Errorf("household request: %w", err)
	}
	return n, nil
}

// File is Request for the turn loop, which does not need the count: in its pipelined
// transaction it is deferred (pipeline.go) and travels with the next statement.
func (t Household) File(ctx context.Context, turnID uuid.UUID, calls []steward.HouseholdCall, expires time.Time) error {
	t.votes = nil // a vote may change
	b, err := json.Marshal(calls)
	if err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, householdFileSQL, turnID, b, expires); err != nil {
		return fmt.Errorf("household request: %w", err)
	}
	return nil
}

// Governs reports whether a policy of the owner's household names another member for a
// call of tool moving m (nil: no amount, or one that could not be read — a policy's minimum
// then matches): the gate then asks, whatever the owner's rules or mode say
// (migrations/00045_household_governs.sql, docs/ARCHITECTURE.md §2).
func (t Household) Governs(ctx context.Context, tool string, m *steward.Money) (bool, error) {
	var minor *int64
	var currency *string
	if m != nil {
		minor, currency = &m.Minor, &m.Currency
	}
	var ok bool
	if err := t.tx.QueryRow(ctx, householdGovernsSQL, tool, minor, currency).Scan(&ok); err != nil {
		return false, fmt.Errorf("household policy of %s: %w", tool, err)
	}
	return ok, nil
}

const (
	householdGovernsSQL = `SELECT household_governs($1, $2, $3)`
	householdRequestSQL = `SELECT household_request($1, $2, $3)`
	// A sqlc-style name, so the pipe defers it.
	householdFileSQL = "-- name: HouseholdFile :exec\n" + householdRequestSQL
)

// Votes are the votes on the owner's own turn, the owner's first for each call.
// In the turn loop's pipelined transaction they are read once until the transaction writes
// a vote (a confirm reads them with its turn, and Runner.Hold then finds them).
func (t Household) Votes(ctx context.Context, turnID uuid.UUID) ([]steward.HouseholdVote, error) {
	if v, ok := t.votes[turnID]; ok && !t.grouped() {
		return v, nil
	}
	rows, err := t.tx.Query(ctx, `SELECT call_id, args_hash, tool, approver_id, approver_name, status, coalesce(message, '')
		FROM household_votes($1)`, turnID)
	if err != nil {
		return nil, fmt.Errorf("household votes: %w", err)
	}
	votes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (steward.HouseholdVote, error) {
		var v steward.HouseholdVote
		err := r.Scan(&v.CallID, &v.ArgsHash, &v.Tool, &v.ApproverID, &v.ApproverName, &v.Status, &v.Message)
		return v, err
	})
	if err == nil && t.pipelined {
		t.votes = map[uuid.UUID][]steward.HouseholdVote{turnID: votes}
	}
	return votes, err
}

// Close voids the still-pending votes on the owner's own turn (it was decided).
func (t Household) Close(ctx context.Context, turnID uuid.UUID) error {
	t.votes = nil // a vote may change
	_, err := t.tx.Exec(ctx, `SELECT household_close($1)`, turnID)
	if err != nil {
		return fmt.Errorf("household close: %w", err)
	}
	return nil
}

// Expire marks the still-pending votes on the owner's own turns whose suspension expired at
// or before now as expired (the sweep's transaction, after Sweep.Expire), and returns how
// many.
func (t Household) Expire(ctx context.Context, now time.Time) (int64, error) {
	t.votes = nil // a vote may change
	var n int64
	if err := t.tx.QueryRow(ctx, `SELECT household_expire($1)`, now).Scan(&n); err != nil {
		return 0, fmt.Errorf("household expire: %w", err)
	}
	return n, nil
}

// lockTurn serializes the votes on one turn (the owner's confirm and the members'
// decisions), so that the last vote always sees every other one.
func (t Household) lockTurn(ctx context.Context, turnID uuid.UUID) error {
	_, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 21))`, turnID.String())
	return err
}

// DecideOwn records the owner's own vote on a call of their turn, while it is pending.
func (t Household) DecideOwn(ctx context.Context, turnID uuid.UUID, callID string, approve bool, message string, now time.Time) error {
	t.votes = nil // a vote may change
	if err := t.lockTurn(ctx, turnID); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `UPDATE household_approvals SET status = $4, message = NULLIF($5, ''), decided_at = $6
		WHERE owner_id = $1 AND requester_id = $1 AND turn_id = $2 AND call_id = $3 AND status = 'pending'`,
		t.ownerID, turnID, callID, voteOf(approve), message, now)
	if err != nil {
		return fmt.Errorf("household own vote: %w", err)
	}
	return nil
}

func voteOf(approve bool) string {
	if approve {
		return steward.VoteApproved
	}
	return steward.VoteDenied
}

const approvalColumns = `id, requester_name, tool, summary, coalesce(amount, ''), status, coalesce(message, ''),
	decided_at, expires_at, created_at, requester_id, turn_id, call_id`

func scanApproval(r pgx.Row) (steward.HouseholdApproval, error) {
	var a steward.HouseholdApproval
	err := r.Scan(&a.ID, &a.RequesterName, &a.Tool, &a.Summary, &a.Amount, &a.Status, &a.Message,
		&a.DecidedAt, &a.ExpiresAt, &a.CreatedAt, &a.RequesterID, &a.TurnID, &a.CallID)
	return a, err
}

// Inbox lists the requests addressed to the owner by other members, newest first.
func (t Household) Inbox(ctx context.Context, limit int) ([]steward.HouseholdApproval, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+approvalColumns+` FROM household_approvals
		WHERE owner_id = $1 AND requester_id <> owner_id ORDER BY created_at DESC, id LIMIT $2`, t.ownerID, limit)
	if err != nil {
		return nil, fmt.Errorf("household inbox: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (steward.HouseholdApproval, error) { return scanApproval(r) })
}

// Decide records the owner's vote on a request addressed to them by another member: once,
// while it is pending and before it expires; else ErrNotFound (unknown, another's, or
// already decided: Get tells which).
func (t Household) Decide(ctx context.Context, id uuid.UUID, approve bool, message string, now time.Time) (steward.HouseholdApproval, error) {
	t.votes = nil // a vote may change
	a, err := t.Get(ctx, id)
	if err != nil {
		return a, err
	}
	if err := t.lockTurn(ctx, a.TurnID); err != nil {
		return a, err
	}
	a, err = scanApproval(t.tx.QueryRow(ctx, `UPDATE household_approvals SET status = $3, message = NULLIF($4, ''), decided_at = $5
		WHERE id = $1 AND owner_id = $2 AND requester_id <> owner_id AND status = 'pending' AND expires_at > $5
		RETURNING `+approvalColumns, id, t.ownerID, voteOf(approve), message, now))
	if err != nil {
		return a, notFound("household decide", err)
	}
	return a, nil
}

// Get reads a request addressed to the owner by another member; else ErrNotFound.
func (t Household) Get(ctx context.Context, id uuid.UUID) (steward.HouseholdApproval, error) {
	a, err := scanApproval(t.tx.QueryRow(ctx, `SELECT `+approvalColumns+` FROM household_approvals
		WHERE id = $1 AND owner_id = $2 AND requester_id <> owner_id`, id, t.ownerID))
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("household approval %s: %w", id, ErrNotFound)
	}
	return a, err
}
