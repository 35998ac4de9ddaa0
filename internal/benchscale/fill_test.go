package benchscale

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/testdb"
)

// filled is a test database filled by the generator at scale f, ANALYZEd.
func filled(t *testing.T, f float64) testdb.DB {
	t.Helper()
	d := testdb.New(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := Fill(ctx, conn, Full(1).Scaled(f), t.Logf); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFillIsReproducible: two fills with the same seed and scale write the same rows (the
// generator's ids, sizes and amounts; times are relative to each fill's now), and the owners'
// sizes are skewed as Sizes says.
func TestFillIsReproducible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	digest := func(d testdb.DB) string {
		conn, err := pgx.Connect(ctx, d.SuperURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var s string
		err = conn.QueryRow(ctx, `SELECT
			(SELECT md5(string_agg(id::text || owner_id::text || status || conversation_id::text, ',' ORDER BY id)) FROM turns) ||
			(SELECT md5(string_agg(transaction_id::text || amount_minor::text, ',' ORDER BY transaction_id, amount_minor)) FROM ledger_postings) ||
			(SELECT md5(string_agg(owner_id::text || source_id || embedding::text, ',' ORDER BY owner_id, source_id, text)) FROM memory_chunks)`).Scan(&s)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := filled(t, 0.003), filled(t, 0.003)
	if da, db := digest(a), digest(b); da != db {
		t.Errorf("two fills with seed 1 differ: %s and %s", da, db)
	}
	conn, err := pgx.Connect(ctx, a.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var largest, smallest int
	if err := conn.QueryRow(ctx, `SELECT max(n), min(n) FROM (SELECT count(*) AS n FROM turns GROUP BY owner_id) c`).Scan(&largest, &smallest); err != nil {
		t.Fatal(err)
	}
	if s := Full(1).Scaled(0.003); largest != int(float64(s.Turns)/harmonic(s.Owners)+0.5) || smallest > largest/10 {
		t.Errorf("owners have %d to %d turns; want the largest Turns/H = %.0f and the smallest under a tenth of it", smallest, largest, float64(s.Turns)/harmonic(s.Owners))
	}
}
