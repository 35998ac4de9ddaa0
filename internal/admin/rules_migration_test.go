package admin_test

import (
	"context"
	"io"
	"testing"

	"github.com/stewardhq/steward/internal/admin"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestRuleMatchMigration (issue 27 §4): the migration that adds standing_rules.match gives
// the rules stored before it a meaning that never allows more than they did: an allow rule
// with a predicate (the approval card's "these arguments", or written through the API) becomes
// exact; a rule without a predicate (any arguments: "always for this tool", the seeded notify
// rule) and every deny rule (which must keep refusing all it refused) stay patterns.
func TestRuleMatchMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	m, err := admin.NewMigrator(ctx, d.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for { // back to before the match column (migration 00029)
		v, err := m.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v < 29 {
			break
		}
		if err := m.Down(ctx, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	su := testdb.Connect(t, d.SuperURL)
	_, err = su.Exec(ctx, `WITH o AS (INSERT INTO owners (name) VALUES ('alice') RETURNING id)
		INSERT INTO standing_rules (owner_id, tool, predicate, effect, source, note)
		SELECT o.id, r.tool, r.predicate::jsonb, r.effect, r.source, r.note FROM o, (VALUES
			('create_task', '{"title":"always-me"}', 'allow', 'approval', 'approval-args'),
			('create_task', '{}', 'allow', 'approval', 'approval-tool'),
			('notify', '{}', 'allow', 'setup', 'setup'),
			('create_task', '{"title":"exact-one"}', 'allow', 'api', 'api-allow'),
			('create_task', '{"title":"gym"}', 'deny', 'api', 'api-deny'),
			('*', '{}', 'deny', 'api', 'api-deny-all')) AS r (tool, predicate, effect, source, note)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Up(ctx, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows, err := su.Query(ctx, `SELECT note, match FROM standing_rules`)
	if err != nil {
		t.Fatalf("read the match of migrated rules: %v", err)
	}
	got := map[string]string{}
	for rows.Next() {
		var note, match string
		if err := rows.Scan(&note, &match); err != nil {
			t.Fatal(err)
		}
		got[note] = match
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for note, want := range map[string]string{"approval-args": "exact", "approval-tool": "pattern", "setup": "pattern",
		"api-allow": "exact", "api-deny": "pattern", "api-deny-all": "pattern"} {
		if got[note] != want {
			t.Errorf("rule %s: match %q after the migration, want %q", note, got[note], want)
		}
	}
}
