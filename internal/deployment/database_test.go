package deployment

import "testing"

// TestRoleURL: a role's URL is the administrator's with the role's user and password, the
// database, and RDS Proxy's host when given; the administrator's credentials never stay in
// its query.
func TestRoleURL(t *testing.T) {
	t.Parallel()
	admin := "postgres://admin:adm%40pw@db.example.com:6543/postgres?sslmode=require&password=adm&user=admin"
	for _, c := range []struct{ host, want string }{
		{"", "postgres://steward_app:p%2Fw@db.example.com:6543/steward?sslmode=require"},
		{"steward-proxy.proxy-x.us-east-1.rds.amazonaws.com", "postgres://steward_app:p%2Fw@steward-proxy.proxy-x.us-east-1.rds.amazonaws.com:5432/steward?sslmode=require"},
		{"proxy.local:5433", "postgres://steward_app:p%2Fw@proxy.local:5433/steward?sslmode=require"},
	} {
		got, err := roleURL(admin, "steward_app", "p/w", "steward", c.host)
		if err != nil || got != c.want {
			t.Errorf("roleURL(host %q) = %q, %v; want %q", c.host, got, err, c.want)
		}
	}
	if _, err := roleURL("host=db user=admin", "steward_app", "pw", "steward", ""); err == nil {
		t.Error("a keyword/value DSN: no error; want one asking for a postgres:// URL")
	}
}
