package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestLedgerImportCommand: the CLI imports a statement, a second run imports nothing, and
// a missing --account or file is a usage mistake.
func TestLedgerImportCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	file := filepath.Join(t.TempDir(), "april.csv")
	if err := os.WriteFile(file, []byte("Date,Description,Amount\n2026-04-01,Coffee,-3.20\n2026-04-02,Salary,2000.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, env, "ledger", "import", file, "--account", "Giro")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"imported":2,"duplicates":0,"rejected":[]`) {
		t.Fatalf("ledger import: %s", r.stdout)
	}
	r = runCLI(t, env, "ledger", "import", file, "--account", "Giro")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"imported":0,"duplicates":2`) {
		t.Fatalf("ledger import again: %s", r.stdout)
	}
	if r := runCLI(t, env, "ledger", "import", file); r.code != 2 {
		t.Errorf("no --account: exit %d, want 2", r.code)
	}
	if r := runCLI(t, env, "ledger", "import", "--account", "Giro"); r.code != 2 {
		t.Errorf("no file: exit %d, want 2", r.code)
	}
}

// TestLedgerSeedCommand: the CLI seeds the demo history, and a second run records nothing.
func TestLedgerSeedCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	n := len(ledger.SeedHistory())
	r := runCLI(t, env, "ledger", "seed")
	wantOK(t, r)
	if !strings.Contains(r.stdout, fmt.Sprintf(`{"recorded":%d,"duplicates":0,`, n)) {
		t.Fatalf("ledger seed: %s", r.stdout)
	}
	r = runCLI(t, env, "ledger", "seed")
	wantOK(t, r)
	if !strings.Contains(r.stdout, fmt.Sprintf(`{"recorded":0,"duplicates":%d,`, n)) {
		t.Fatalf("ledger seed again: %s", r.stdout)
	}
	if r := runCLI(t, env, "ledger", "seed", "extra"); r.code != 2 {
		t.Errorf("seed with an argument: exit %d, want 2", r.code)
	}
}
