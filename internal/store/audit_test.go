package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestAuditLogAppendOnly: no role rewrites history. The app role lacks the privileges; the
// owner role (which owns the table) and even the superuser are stopped by the trigger.
func TestAuditLogAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, door := newDoor(t)
	owner, _, err := door.CreateOwner(ctx, "auditee")
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(ctx, d.AppURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		return tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{{Seq: 1, Kind: "approval", Data: []byte(`{"approved":true}`)}})
	})
	if err != nil {
		t.Fatal(err)
	}

	roles := []struct {
		name, url, want string
	}{
		{"steward_app", d.AppURL, "permission denied"},
		{"steward_owner", d.OwnerURL, "audit_log is append-only"},
		{"superuser", d.SuperURL, "audit_log is append-only"},
	}
	statements := []string{
		`UPDATE audit_log SET kind = 'rewritten'`,
		`DELETE FROM audit_log`,
		`TRUNCATE audit_log`,
	}
	for _, role := range roles {
		conn := testdb.Connect(t, role.url)
		for _, sql := range statements {
			// With the owner set, row-level security shows the row, so a refusal is the
			// trigger's or the grants' doing, not an empty match.
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SELECT set_config('app.owner_id', $1, true)`, owner.ID.String()); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, sql)
				return err
			})
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "42501" || !strings.Contains(pgErr.Message, role.want) {
				t.Errorf("%s: %s: err = %v, want 42501 %q", role.name, sql, err, role.want)
			}
		}
	}

	err = s.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		events, err := tx.Journal.RecentEvents(ctx, 10)
		if err != nil {
			return err
		}
		if len(events) != 1 || events[0].Kind != "approval" {
			t.Errorf("audit log after the attempts: %+v, want the one original event", events)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
