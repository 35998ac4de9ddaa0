package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// OAuth is the owner's sign-ins in flight and the grants they gave (migrations/00058_oauth.sql,
// internal/oauth): every token sealed by the caller.
type OAuth struct{ *conn }

// OAuthState is a sign-in in flight.
type OAuthState struct {
	SessionID uuid.UUID
	Provider  string
	Verifier  []byte
	ExpiresAt time.Time
	Used      bool
}

// OAuthGrant is a provider's grant as stored: the tokens sealed.
type OAuthGrant struct {
	Provider, Email, Scopes   string
	AccessToken, RefreshToken []byte
	ExpiresAt                 time.Time
	Status, Problem           string
	Notified                  bool
	LeaseUntil                time.Time
	CreatedAt                 time.Time
}

// CreateState records a sign-in begun in a session (and forgets the owner's day-old ones).
func (t OAuth) CreateState(ctx context.Context, hash []byte, sessionID uuid.UUID, provider string, verifier []byte, expires time.Time) error {
	if err := t.q.DeleteStaleOAuthStates(ctx, t.ownerID); err != nil {
		return fmt.Errorf("forget old sign-ins: %w", err)
	}
	err := t.q.CreateOAuthState(ctx, db.CreateOAuthStateParams{OwnerID: t.ownerID, StateHash: hash, SessionID: sessionID,
		Provider: provider, Verifier: verifier, ExpiresAt: expires})
	return notFoundOrNil("begin sign-in", err)
}

// State reads a sign-in by its state's hash, locked until the transaction ends; none is
// ErrNotFound.
func (t OAuth) State(ctx context.Context, hash []byte) (OAuthState, error) {
	r, err := t.q.GetOAuthState(ctx, db.GetOAuthStateParams{OwnerID: t.ownerID, StateHash: hash})
	if err != nil {
		return OAuthState{}, notFound("get sign-in", err)
	}
	return OAuthState{SessionID: r.SessionID, Provider: r.Provider, Verifier: r.Verifier, ExpiresAt: r.ExpiresAt, Used: r.UsedAt != nil}, nil
}

// UseState marks a sign-in used; one used already is ErrNotFound.
func (t OAuth) UseState(ctx context.Context, hash []byte) error {
	n, err := t.q.UseOAuthState(ctx, db.UseOAuthStateParams{OwnerID: t.ownerID, StateHash: hash})
	return rowsOrNotFound("use sign-in", n, err)
}

// SaveGrant stores a provider's grant, connected, replacing the owner's earlier one.
func (t OAuth) SaveGrant(ctx context.Context, g OAuthGrant) error {
	err := t.q.UpsertOAuthGrant(ctx, db.UpsertOAuthGrantParams{OwnerID: t.ownerID, Provider: g.Provider, Email: g.Email, Scopes: g.Scopes,
		AccessToken: g.AccessToken, RefreshToken: g.RefreshToken, ExpiresAt: g.ExpiresAt})
	return notFoundOrNil("save grant", err)
}

func grantOf(provider, email, scopes string, access, refresh []byte, expires time.Time, status, problem string,
	notified, leaseUntil *time.Time, created time.Time) OAuthGrant {
	g := OAuthGrant{Provider: provider, Email: email, Scopes: scopes, AccessToken: access, RefreshToken: refresh,
		ExpiresAt: expires, Status: status, Problem: problem, Notified: notified != nil, CreatedAt: created}
	if leaseUntil != nil {
		g.LeaseUntil = *leaseUntil
	}
	return g
}

// Grant reads the owner's grant of a provider; none is ErrNotFound.
func (t OAuth) Grant(ctx context.Context, provider string) (OAuthGrant, error) {
	r, err := t.q.GetOAuthGrant(ctx, db.GetOAuthGrantParams{OwnerID: t.ownerID, Provider: provider})
	if err != nil {
		return OAuthGrant{}, notFound("get grant", err)
	}
	return grantOf(r.Provider, r.Email, r.Scopes, r.AccessToken, r.RefreshToken, r.ExpiresAt, r.Status, r.Problem, r.NotifiedAt, r.LeaseUntil, r.CreatedAt), nil
}

// Grants lists the owner's grants by provider.
func (t OAuth) Grants(ctx context.Context) ([]OAuthGrant, error) {
	rows, err := t.q.ListOAuthGrants(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out := make([]OAuthGrant, len(rows))
	for i, r := range rows {
		out[i] = grantOf(r.Provider, r.Email, r.Scopes, r.AccessToken, r.RefreshToken, r.ExpiresAt, r.Status, r.Problem, r.NotifiedAt, r.LeaseUntil, r.CreatedAt)
	}
	return out, nil
}

// Lease takes the grant's refresh lease for d under id, when no one holds it and the grant is
// connected; otherwise ErrNotFound. It returns the grant's tokens as they are now.
func (t OAuth) Lease(ctx context.Context, provider string, id uuid.UUID, d time.Duration) (OAuthGrant, error) {
	r, err := t.q.LeaseOAuthGrant(ctx, db.LeaseOAuthGrantParams{OwnerID: t.ownerID, Provider: provider, LeaseID: uuid.NullUUID{UUID: id, Valid: true},
		Seconds: d.Seconds()})
	if err != nil {
		return OAuthGrant{}, notFound("lease grant", err)
	}
	return OAuthGrant{Provider: provider, AccessToken: r.AccessToken, RefreshToken: r.RefreshToken, ExpiresAt: r.ExpiresAt}, nil
}

// Refreshed stores refreshed tokens and ends lease id; a lease lost meanwhile is ErrNotFound.
func (t OAuth) Refreshed(ctx context.Context, provider string, id uuid.UUID, access, refresh []byte, expires time.Time) error {
	n, err := t.q.RefreshedOAuthGrant(ctx, db.RefreshedOAuthGrantParams{OwnerID: t.ownerID, Provider: provider, LeaseID: uuid.NullUUID{UUID: id, Valid: true},
		AccessToken: access, RefreshToken: refresh, ExpiresAt: expires})
	return rowsOrNotFound("store refreshed grant", n, err)
}

// Release ends lease id without a change.
func (t OAuth) Release(ctx context.Context, provider string, id uuid.UUID) error {
	err := t.q.ReleaseOAuthGrant(ctx, db.ReleaseOAuthGrantParams{OwnerID: t.ownerID, Provider: provider, LeaseID: uuid.NullUUID{UUID: id, Valid: true}})
	return notFoundOrNil("release grant", err)
}

// Disconnect marks the grant refused by its provider, with why; first is true the first time
// (the owner is to be told once).
func (t OAuth) Disconnect(ctx context.Context, provider, problem string) (first bool, err error) {
	first, err = t.q.DisconnectOAuthGrant(ctx, db.DisconnectOAuthGrantParams{OwnerID: t.ownerID, Provider: provider, Problem: problem})
	return first, notFoundOrNil("disconnect grant", err)
}

// DeleteGrant removes the owner's grant of a provider; none is ErrNotFound.
func (t OAuth) DeleteGrant(ctx context.Context, provider string) error {
	n, err := t.q.DeleteOAuthGrant(ctx, db.DeleteOAuthGrantParams{OwnerID: t.ownerID, Provider: provider})
	return rowsOrNotFound("delete grant", n, err)
}
