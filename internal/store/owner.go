package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// Owner reads the transaction's own owner row.
func (t Account) Get(ctx context.Context) (Owner, error) {
	r, err := t.q.GetOwner(ctx, t.ownerID)
	if err != nil {
		return Owner{}, notFound("owner", err)
	}
	return toOwner(r), nil
}

// Mode is the owner's gate mode.
func (t Safety) Mode(ctx context.Context) (string, error) {
	if t.pipelined {
		r, err := t.controlState(ctx)
		return r.OwnerMode, err
	}
	o, err := Account(t).Get(ctx)
	return o.Mode, err
}

// SetMode sets the owner's gate mode (ask, deny or auto).
func (t Safety) SetMode(ctx context.Context, mode string) error {
	t.control = nil
	n, err := t.q.SetOwnerMode(ctx, db.SetOwnerModeParams{ID: t.ownerID, Mode: mode})
	return rowsOrNotFound("set mode", n, err)
}

// APIKeys lists the owner's own keys.
func (t Account) APIKeys(ctx context.Context) ([]APIKey, error) {
	rows, err := t.q.ListAPIKeys(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	keys := make([]APIKey, len(rows))
	for i, r := range rows {
		keys[i] = APIKey(r)
	}
	return keys, nil
}

// RevokeAPIKey revokes one of the owner's own keys.
func (t Account) RevokeAPIKey(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.RevokeAPIKey(ctx, db.RevokeAPIKeyParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("revoke key", n, err)
}
