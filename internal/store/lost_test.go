package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// terminate ends every connection of the runtime's roles to d, as a failover does.
func terminate(t *testing.T, d testdb.DB) {
	t.Helper()
	conn := testdb.Connect(t, d.SuperURL)
	if _, err := conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND usename IN ('steward_app', 'steward_door', 'steward_owner')`); err != nil {
		t.Fatal(err)
	}
}

// TestEveryPathSurvivesAFailover: after every pooled connection was ended, each way the
// store reaches PostgreSQL — an owner transaction, a pipelined one, the door's lone
// statements (one row, many rows, none) and its transactions, a ping — answers on a fresh
// connection, not with the dead one's error.
func TestEveryPathSurvivesAFailover(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	ctx := context.Background()
	owner, key := db.Owner(t, "alice")
	paths := map[string]func() error{
		"WithOwner": func() error {
			return db.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error { _, err := tx.Conversations.List(ctx, 10); return err })
		},
		"InOwner": func() error {
			return db.Store.InOwner(ctx, owner.ID, func(tx agent.Tx) error { _, err := tx.Data.ListTasks(ctx, "all"); return err })
		},
		"door, one row":   func() error { _, err := db.Door.Authenticate(ctx, key); return err },
		"door, many rows": func() error { _, err := db.Door.DueIngests(ctx, time.Now(), 10); return err },
		"door, a write":   func() error { return db.Door.SetGlobalCostCap(ctx, 5_000_000) },
		"door, a transaction": func() error {
			_, _, err := db.Door.AddKey(ctx, owner.ID, "second")
			return err
		},
		"ping": func() error { return db.Store.Ping(ctx) },
	}
	for name, path := range paths {
		// Several connections in each pool, then all of them ended.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { _ = path() })
		}
		wg.Wait()
		terminate(t, db.DB)
		if err := path(); err != nil {
			t.Errorf("%s after the failover: %v", name, err)
		}
	}
}
