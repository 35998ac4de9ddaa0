package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

// TestWarmPoolPreparesAndPlans: a warm pool (WithWarmPool, steward serve's) opens its
// connections in the background and, in the default exec mode, has prepared the turn loop's
// statements on each and made the plans of its reads — recall's among them — before any
// request ran one; recall then runs on that plan and finds the owner's chunk alone. The modes
// behind RDS Proxy create no named prepared statement.
func TestWarmPoolPreparesAndPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, door := newDoor(t)
	monitor, err := pgx.Connect(ctx, d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { monitor.Close(context.Background()) })
	prepare, run := store.HotStatements()
	if len(prepare) < 30 || len(run) < 10 {
		t.Fatalf("%d hot statements, %d reads: want the turn loop's", len(prepare), len(run))
	}
	vector := make([]float32, 768)
	vector[0] = 1
	for _, mode := range append([]string{""}, config.DBExecModes...) {
		u, err := store.WithExecMode(d.AppURL, mode)
		if err != nil {
			t.Fatal(err)
		}
		if u, err = store.WithGenericPlans(u); err != nil {
			t.Fatal(err)
		}
		if u, err = store.WithWarmPool(u, 2); err != nil {
			t.Fatal(err)
		}
		s, err := store.OpenLazy(u, 2)
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		// Both connections open in the background, without a request.
		var conns int
		for deadline := time.Now().Add(20 * time.Second); conns < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if err := monitor.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND usename = 'steward_app'`).Scan(&conns); err != nil {
				t.Fatal(err)
			}
		}
		if conns != 2 {
			t.Fatalf("%q: the warm pool opened %d connections by itself, want 2", mode, conns)
		}
		var prepared, planned int
		err = s.RawRow(ctx, `SELECT count(*) FILTER (WHERE statement = ANY ($1)), count(*) FILTER (WHERE statement = ANY ($2) AND generic_plans > 0)
			FROM pg_prepared_statements`, prepare, run).Scan(&prepared, &planned)
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		named := mode == "" || mode == "cache_statement"
		if named && (prepared != len(prepare) || planned != len(run)) {
			t.Errorf("%q: %d of %d hot statements prepared, %d of %d reads planned on a new connection; want all", mode, prepared, len(prepare), planned, len(run))
		} else if !named && prepared != 0 {
			t.Errorf("%q: %d named statements prepared; want none in this mode", mode, prepared)
		}
		owner, _, err := door.CreateOwner(ctx, "alice "+mode)
		if err != nil {
			t.Fatal(err)
		}
		err = s.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
			if _, err := tx.Memory.AddChunkOnce(ctx, "conversation", "", store.OriginOwner, mode+" tea", vector); err != nil {
				return err
			}
			chunks, err := tx.Memory.NearestChunks(ctx, vector, 10)
			if err == nil && (len(chunks) != 1 || chunks[0].Text != mode+" tea") {
				t.Errorf("%q: recall on a warm connection found %+v", mode, chunks)
			}
			return err
		})
		if err != nil {
			t.Fatalf("%q: %v", mode, err)
		}
		s.Close()
	}
	for in, want := range map[string]string{
		"host=db user=u":                        "host=db user=u pool_min_conns=2",
		"postgres://u@db/x?sslmode=disable":     "postgres://u@db/x?pool_min_conns=2&sslmode=disable",
		"postgres://u@db/x?pool_min_conns=0":    "postgres://u@db/x?pool_min_conns=0",
		"postgres://u@db/x?pool_min_conns=5&a=": "postgres://u@db/x?pool_min_conns=5&a=",
	} {
		if got, err := store.WithWarmPool(in, 2); err != nil || got != want {
			t.Errorf("WithWarmPool(%q, 2) = %q, %v; want %q", in, got, err, want)
		}
	}
}
