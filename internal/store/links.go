package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// Links are the owner's one-tap approval links (migrations/00019_approval_links.sql):
// created in the transaction that saves a suspended turn, marked used in the claim's.
type Links struct{ *conn }

// Notifiable is true when the owner has an enabled default notification channel; in a
// pipelined transaction whose gate read the control state, as that read said (one statement
// and one round trip fewer for a suspension).
func (t Links) Notifiable(ctx context.Context) (bool, error) {
	if t.notifiable != nil && !t.grouped() {
		return *t.notifiable, nil
	}
	c, err := t.q.GetChannel(ctx, t.ownerID)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("default channel: %w", err)
	}
	return c.Enabled, nil
}

// Create stores a link (its token's hash only).
func (t Links) Create(ctx context.Context, l steward.NewLink) error {
	err := t.q.CreateApprovalLink(ctx, db.CreateApprovalLinkParams{OwnerID: t.ownerID, TurnID: l.TurnID, Hash: l.Hash,
		Approve: l.Approve, Calls: steward.LinkCallsJSON(l.Calls), SuspendedUntil: l.SuspendedUntil, ExpiresAt: l.ExpiresAt})
	if err != nil {
		return notFound("create link", err)
	}
	return nil
}

// Get reads the owner's link of a token hash; another owner's or an unknown one is ErrNotFound.
func (t Links) Get(ctx context.Context, hash []byte) (steward.Link, error) {
	r, err := t.q.GetApprovalLink(ctx, db.GetApprovalLinkParams{OwnerID: t.ownerID, Hash: hash})
	if err != nil {
		return steward.Link{}, notFound("link", err)
	}
	l := steward.Link{ID: r.ID, TurnID: r.TurnID, Approve: r.Approve, SuspendedUntil: r.SuspendedUntil,
		ExpiresAt: r.ExpiresAt, UsedAt: r.UsedAt}
	if err := json.Unmarshal(r.Calls, &l.Calls); err != nil {
		return steward.Link{}, fmt.Errorf("link calls: %w", err)
	}
	return l, nil
}

// Use marks the owner's link used at now, once and before it expires; else ErrNotFound.
func (t Links) Use(ctx context.Context, hash []byte, now time.Time) error {
	n, err := t.q.UseApprovalLink(ctx, db.UseApprovalLinkParams{OwnerID: t.ownerID, Hash: hash, Now: now})
	return rowsOrNotFound("use link", n, err)
}

// LookupLinkOwner finds whose link a token hash is, across owners (the link is all a request
// carries); an unknown hash is ErrNotFound. The door reads only (owner_id, hash).
func (d *Door) LookupLinkOwner(ctx context.Context, hash []byte) (uuid.UUID, error) {
	if len(hash) != 32 {
		return uuid.Nil, fmt.Errorf("link: %w", ErrNotFound)
	}
	id, err := db.New(d.conn()).LookupApprovalLinkOwner(ctx, hash)
	if err != nil {
		return uuid.Nil, notFound("link", err)
	}
	return id, nil
}
