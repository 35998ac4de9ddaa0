package admin_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

func TestVectorAvailable(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	v, err := admin.VectorAvailable(context.Background(), d.SuperURL)
	if err != nil || v == "" {
		t.Fatalf("VectorAvailable = %q, %v", v, err)
	}
}

// TestVectorErrorOnServerWithoutPgvector: the test server has pgvector, so ask it for an
// extension it lacks to learn the exact error PostgreSQL gives, and check VectorError turns
// that error, for vector, into the sentence an operator can act on.
func TestVectorErrorOnServerWithoutPgvector(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	_, err := testdb.Connect(t, d.SuperURL).Exec(context.Background(), `CREATE EXTENSION steward_absent_ext`)
	var real *pgconn.PgError
	if !errors.As(err, &real) {
		t.Fatalf("CREATE EXTENSION of a missing extension: %v", err)
	}
	missingVector := *real
	missingVector.Message = strings.ReplaceAll(real.Message, "steward_absent_ext", "vector")
	if missingVector.Message == real.Message {
		t.Fatalf("unexpected message shape %q", real.Message)
	}
	got := store.VectorError(fmt.Errorf("prepare database: %w", &missingVector))
	if !errors.Is(got, store.ErrNoVector) || got.Error() != "the vector extension is not available on this server: install pgvector ≥ 0.8" {
		t.Fatalf("VectorError(%q) = %v", missingVector.Message, got)
	}
	if other := store.VectorError(err); other != err {
		t.Fatalf("VectorError changed an error about another extension: %v", other)
	}
	if store.VectorError(nil) != nil {
		t.Fatal("VectorError(nil) != nil")
	}
}

// TestDiagnoseUnpreparedDatabase: a database the bootstrap and migrations never touched
// fails the doctor with reasons saying what to run.
func TestDiagnoseUnpreparedDatabase(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	name := emptyDatabase(t, d, false)
	ownerURL, appURL, doorURL := onDatabase(t, d.OwnerURL, name), onDatabase(t, d.AppURL, name), onDatabase(t, d.DoorURL, name)
	checks := map[string]admin.Check{}
	for _, c := range admin.Diagnose(context.Background(), admin.RoleURLs{Owner: ownerURL, App: appURL, Door: doorURL}, 768) {
		checks[c.Name] = c
	}
	for name, want := range map[string]string{
		"pgvector":   "not installed in this database (run: steward migrate bootstrap)",
		"migrations": "database at version 0, latest is",
	} {
		if c := checks[name]; c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("%s: %+v, want a failure saying %q", name, c, want)
		}
	}
	for _, name := range []string{"database as steward_owner", "database as steward_app", "database as steward_door"} {
		if c := checks[name]; !c.OK {
			t.Errorf("%s: %s", name, c.Detail)
		}
	}
}

// TestDiagnoseEmbeddingDimension: doctor fails when the embedding column's dimension is not
// the one this binary embeds with, and names the column's.
func TestDiagnoseEmbeddingDimension(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	urls := admin.RoleURLs{Owner: d.OwnerURL, App: d.AppURL, Door: d.DoorURL}
	for _, tc := range []struct {
		dim    int
		wantOK bool
	}{{768, true}, {1536, false}} {
		var found bool
		for _, c := range admin.Diagnose(context.Background(), urls, tc.dim) {
			if c.Name != "embedding dimension" {
				continue
			}
			found = true
			if c.OK != tc.wantOK || !strings.Contains(c.Detail, "vector(768)") {
				t.Errorf("dimension %d: check = %+v, want OK %v naming vector(768)", tc.dim, c, tc.wantOK)
			}
		}
		if !found {
			t.Errorf("dimension %d: no embedding dimension check", tc.dim)
		}
	}
}
