package store

import (
	"context"
	"fmt"
	"time"

	"github.com/stewardhq/steward/db"
)

// Accounts are the owner's mail and calendar accounts (migrations/00034_accounts.sql,
// docs/MAIL.md): one of each kind, its public settings as JSON and its password sealed.
type Accounts struct{ *conn }

// StoredAccount is an account as stored: Secret is sealed (internal/secret).
type StoredAccount struct {
	Kind      string
	Settings  []byte
	Secret    []byte
	CreatedAt time.Time
}

// Create stores an account; a second one of the same kind is ErrConflict.
func (t Accounts) Create(ctx context.Context, a StoredAccount) (StoredAccount, error) {
	r, err := t.q.CreateAccount(ctx, db.CreateAccountParams{OwnerID: t.ownerID, Kind: a.Kind, Settings: a.Settings, Secret: a.Secret})
	if err != nil {
		return StoredAccount{}, notFound("create account", err)
	}
	return StoredAccount{Kind: r.Kind, Settings: r.Settings, Secret: r.Secret, CreatedAt: r.CreatedAt}, nil
}

// List lists the owner's accounts by kind.
func (t Accounts) List(ctx context.Context) ([]StoredAccount, error) {
	rows, err := t.q.ListAccounts(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	out := make([]StoredAccount, len(rows))
	for i, r := range rows {
		out[i] = StoredAccount{Kind: r.Kind, Settings: r.Settings, Secret: r.Secret, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// Get reads the owner's account of a kind; none is ErrNotFound.
func (t Accounts) Get(ctx context.Context, kind string) (StoredAccount, error) {
	r, err := t.q.GetAccount(ctx, db.GetAccountParams{OwnerID: t.ownerID, Kind: kind})
	if err != nil {
		return StoredAccount{}, notFound("get account", err)
	}
	return StoredAccount{Kind: r.Kind, Settings: r.Settings, Secret: r.Secret, CreatedAt: r.CreatedAt}, nil
}

// Delete removes the owner's account of a kind; none is ErrNotFound.
func (t Accounts) Delete(ctx context.Context, kind string) error {
	n, err := t.q.DeleteAccount(ctx, db.DeleteAccountParams{OwnerID: t.ownerID, Kind: kind})
	return rowsOrNotFound("delete account", n, err)
}
