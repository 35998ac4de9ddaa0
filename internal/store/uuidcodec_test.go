package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// The pool's google/uuid codec round-trips uuid.UUID, *uuid.UUID (nil is NULL),
// uuid.NullUUID and uuid[] through real PostgreSQL in every exec mode (binary and, in the
// simple protocol, text), and the server sees the same value as uuid.UUID.String.
func TestUUIDCodecRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	pool, err := store.NewPool(ctx, d.OwnerURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a, b := uuid.New(), uuid.MustParse("00112233-4455-6677-8899-aabbccddeeff")
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for _, mode := range modes {
		for _, format := range []int16{pgx.BinaryFormatCode, pgx.TextFormatCode} {
			rf := pgx.QueryResultFormats{format}
			var gotU uuid.UUID
			var text string
			if err := pool.QueryRow(ctx, "SELECT $1::uuid, $1::uuid::text", mode, rf, a).Scan(&gotU, &text); err != nil {
				t.Fatalf("%v/%d uuid.UUID: %v", mode, format, err)
			}
			if gotU != a || text != a.String() {
				t.Errorf("%v/%d uuid.UUID: got %v (server %q), want %v", mode, format, gotU, text, a)
			}

			var nilU *uuid.UUID
			var isNull bool
			var gotNull uuid.NullUUID
			var gotPtr *uuid.UUID = &gotU
			if err := pool.QueryRow(ctx, "SELECT $1::uuid IS NULL, $1::uuid, $1::uuid", mode, rf, nilU).Scan(&isNull, &gotNull, &gotPtr); err != nil {
				t.Fatalf("%v/%d nil *uuid.UUID: %v", mode, format, err)
			}
			if !isNull || gotNull.Valid || gotPtr != nil {
				t.Errorf("%v/%d nil *uuid.UUID: null %v, NullUUID %+v, *uuid.UUID %v", mode, format, isNull, gotNull, gotPtr)
			}
			// NULL into a uuid.UUID is the zero UUID, as google/uuid's own Scan made it.
			if err := pool.QueryRow(ctx, "SELECT NULL::uuid", mode, rf).Scan(&gotU); err != nil || gotU != uuid.Nil {
				t.Errorf("%v/%d: NULL into uuid.UUID: %v, %v", mode, format, gotU, err)
			}

			if err := pool.QueryRow(ctx, "SELECT $1::uuid::text, $2::uuid, $3::uuid IS NULL", mode, rf, &b,
				uuid.NullUUID{UUID: b, Valid: true}, uuid.NullUUID{}).Scan(&text, &gotNull, &isNull); err != nil {
				t.Fatalf("%v/%d *uuid.UUID, NullUUID: %v", mode, format, err)
			}
			if text != b.String() || gotNull != (uuid.NullUUID{UUID: b, Valid: true}) || !isNull {
				t.Errorf("%v/%d *uuid.UUID, NullUUID: %q %+v %v", mode, format, text, gotNull, isNull)
			}

			// uuid[] parameters (= ANY($1::uuid[]) in the queries) and uuid[] results.
			var gotArr []uuid.UUID
			var n int
			if err := pool.QueryRow(ctx, "SELECT $1::uuid[], array_to_string($1::uuid[], ','), (SELECT count(*) FROM unnest($1::uuid[]) x WHERE x = ANY($1::uuid[]))",
				mode, rf, []uuid.UUID{a, b}).Scan(&gotArr, &text, &n); err != nil {
				t.Fatalf("%v/%d []uuid.UUID: %v", mode, format, err)
			}
			if !slices.Equal(gotArr, []uuid.UUID{a, b}) || text != a.String()+","+b.String() || n != 2 {
				t.Errorf("%v/%d []uuid.UUID: %v %q %d", mode, format, gotArr, text, n)
			}
			// Rows of one uuid column into a slice, as sqlc's :many queries read them.
			rows, _ := pool.Query(ctx, "SELECT unnest($1::uuid[])", mode, rf, []uuid.UUID{b, a})
			ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			if err != nil || !slices.Equal(ids, []uuid.UUID{b, a}) {
				t.Errorf("%v/%d rows of uuid: %v %v", mode, format, ids, err)
			}
		}
	}
}

// Encoding and scanning a uuid.UUID on a pool connection allocate nothing (pgx's fallback
// through driver.Valuer and sql.Scanner took several allocations each).
func TestUUIDCodecAllocatesNothing(t *testing.T) { // not parallel: AllocsPerRun
	ctx := context.Background()
	d := testdb.New(t)
	pool, err := store.NewPool(ctx, d.OwnerURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	m := c.Conn().TypeMap()
	u := uuid.New()
	var v any = u // the caller's argument, already boxed
	buf := make([]byte, 0, 64)
	var got uuid.UUID
	var dst any = &got
	for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
		var src []byte
		encode := func() {
			if src, err = m.Encode(pgtype.UUIDOID, format, v, buf[:0]); err != nil {
				t.Fatal(err)
			}
		}
		scan := func() {
			if err := m.Scan(pgtype.UUIDOID, format, src, dst); err != nil {
				t.Fatal(err)
			}
		}
		encode()
		scan()
		if got != u {
			t.Fatalf("format %d: round trip gave %v, want %v", format, got, u)
		}
		if n := testing.AllocsPerRun(100, encode); n != 0 {
			t.Errorf("format %d: encoding a uuid.UUID allocates %.0f times", format, n)
		}
		if n := testing.AllocsPerRun(100, scan); n != 0 {
			t.Errorf("format %d: scanning a uuid.UUID allocates %.0f times", format, n)
		}
	}
}
