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

func TestFillTiming(t *testing.T) {
	filled(t, 0.01)
}
