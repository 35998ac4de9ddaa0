package admin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/stewardhq/steward/internal/testdb"
)

// catalogCheckNames are the checks CatalogChecks must report, so one cannot silently vanish.
var catalogCheckNames = []string{"pgvector", "row-level security", "roles", "api keys", "security definer", "views", "audit log"}

// catalog runs CatalogChecks as steward_owner and indexes them by name.
func catalog(t *testing.T, ownerURL string) map[string]admin.Check {
	t.Helper()
	checks := map[string]admin.Check{}
	for _, c := range admin.CatalogChecks(context.Background(), testdb.Connect(t, ownerURL)) {
		checks[c.Name] = c
	}
	for _, name := range catalogCheckNames {
		if _, ok := checks[name]; !ok {
			t.Fatalf("CatalogChecks has no %q check: %+v", name, checks)
		}
	}
	return checks
}

func TestCatalogLint(t *testing.T) {
	t.Parallel()
	d := testdb.New(t)
	for name, c := range catalog(t, d.OwnerURL) {
		if !c.OK {
			t.Errorf("%s: %s", name, c.Detail)
		}
	}

}

// TestCatalogLintCatches breaks one rule per case, in a database of its own, and expects
// exactly that check to fail with a reason naming the object.
func TestCatalogLintCatches(t *testing.T) {
	t.Parallel()
	const isolated = `owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid`
	cases := []struct {
		name      string
		superuser bool // run the SQL as the superuser instead of steward_owner
		sql       []string
		check     string
		want      string
	}{
		{
			name: "owner_id table without FORCE",
			sql: []string{
				`CREATE TABLE gadgets (id int, owner_id uuid NOT NULL)`,
				`ALTER TABLE gadgets ENABLE ROW LEVEL SECURITY`,
				`CREATE POLICY owner_isolation ON gadgets USING (` + isolated + `) WITH CHECK (` + isolated + `)`,
			},
			check: "row-level security", want: "gadgets: row-level security is not forced",
		},
		{
			name:  "owner_id table without row-level security",
			sql:   []string{`CREATE TABLE gadgets (id int, owner_id uuid NOT NULL)`},
			check: "row-level security", want: "gadgets: row-level security is not enabled",
		},
		{
			name: "policy without WITH CHECK",
			sql: []string{
				`CREATE TABLE gadgets (id int, owner_id uuid NOT NULL)`,
				`ALTER TABLE gadgets ENABLE ROW LEVEL SECURITY`,
				`ALTER TABLE gadgets FORCE ROW LEVEL SECURITY`,
				`CREATE POLICY owner_isolation ON gadgets USING (` + isolated + `)`,
			},
			check: "row-level security", want: "gadgets: owner_isolation must apply to all commands and roles with USING and WITH CHECK",
		},
		{
			name:  "an extra permissive policy",
			sql:   []string{`CREATE POLICY open_house ON tasks USING (true) WITH CHECK (true)`},
			check: "row-level security", want: "tasks: unreviewed policy open_house",
		},
		{
			name:  "SECURITY DEFINER function",
			sql:   []string{`CREATE FUNCTION count_all_tasks() RETURNS bigint LANGUAGE sql SECURITY DEFINER AS 'SELECT count(*) FROM tasks'`},
			check: "security definer", want: "SECURITY DEFINER function count_all_tasks is not on the reviewed allowlist",
		},
		{
			name:  "view without security_invoker",
			sql:   []string{`CREATE VIEW all_tasks AS SELECT * FROM tasks`},
			check: "views", want: "view all_tasks lacks security_invoker",
		},
		{
			name:  "audit log trigger disabled",
			sql:   []string{`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`},
			check: "audit log", want: "audit_log has no trigger refusing UPDATE",
		},
		{
			name:      "app role owns a table",
			superuser: true,
			sql:       []string{`CREATE TABLE app_owned (id int)`, `ALTER TABLE app_owned OWNER TO steward_app`},
			check:     "roles", want: "steward_app owns app_owned",
		},
		{
			name:  "app role can mint API keys",
			sql:   []string{`GRANT INSERT ON api_keys TO steward_app`},
			check: "api keys", want: "steward_app can insert into api_keys",
		},
		{
			name:  "app role can rewrite a key's hash",
			sql:   []string{`GRANT UPDATE (hash) ON api_keys TO steward_app`},
			check: "api keys", want: "steward_app can update api_keys.hash",
		},
		{
			name:  "a revoked key can be brought back",
			sql:   []string{`ALTER TABLE api_keys DISABLE TRIGGER api_keys_revocation_final`},
			check: "api keys", want: "no enabled trigger keeps a revoked API key revoked",
		},
		{
			name:      "door role owns a table",
			superuser: true,
			sql:       []string{`CREATE TABLE door_owned (id int)`, `ALTER TABLE door_owned OWNER TO steward_door`},
			check:     "roles", want: "steward_door owns door_owned",
		},
		{
			name:  "door role may truncate",
			sql:   []string{`GRANT TRUNCATE ON tasks TO steward_door`},
			check: "roles", want: "steward_door holds TRUNCATE on tasks",
		},
		{
			name:  "app role may add triggers",
			sql:   []string{`GRANT TRIGGER, REFERENCES ON turns TO steward_app`},
			check: "roles", want: "steward_app holds REFERENCES on turns; steward_app holds TRIGGER on turns",
		},
		{
			name:  "door role may write",
			sql:   []string{`GRANT UPDATE (mode) ON owners TO steward_door`},
			check: "roles", want: "steward_door can update owners (the door only reads)",
		},
		{
			name:  "app role may create in the schema",
			sql:   []string{`GRANT CREATE ON SCHEMA public TO steward_app`},
			check: "roles", want: "steward_app can create objects in schema public",
		},
		{
			name: "a door policy that writes",
			sql: []string{`DROP POLICY door ON schedules`,
				`CREATE POLICY door ON schedules TO steward_door USING (true) WITH CHECK (true)`},
			check: "row-level security", want: "schedules: policy door must be FOR SELECT only",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := testdb.New(t)
			url := d.OwnerURL
			if tc.superuser {
				url = d.SuperURL
			}
			conn := testdb.Connect(t, url)
			for _, sql := range tc.sql {
				if _, err := conn.Exec(context.Background(), sql); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			for name, c := range catalog(t, d.OwnerURL) {
				switch {
				case name == tc.check && c.OK:
					t.Errorf("%s: passed, want it to fail with %q", name, tc.want)
				case name == tc.check && !strings.Contains(c.Detail, tc.want):
					t.Errorf("%s: reason %q, want it to say %q", name, c.Detail, tc.want)
				case name != tc.check && !c.OK:
					t.Errorf("%s: failed too: %s", name, c.Detail)
				}
			}
		})
	}

	t.Run("a security_invoker view passes", func(t *testing.T) {
		t.Parallel()
		d := testdb.New(t)
		if _, err := testdb.Connect(t, d.OwnerURL).Exec(context.Background(), `CREATE VIEW my_tasks WITH (security_invoker = true) AS SELECT * FROM tasks`); err != nil {
			t.Fatal(err)
		}
		if c := catalog(t, d.OwnerURL)["views"]; !c.OK {
			t.Fatalf("views: %s", c.Detail)
		}
	})
}
