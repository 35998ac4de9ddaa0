package httpapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestLedgerImportRoute: a text/csv statement imports and answers the counts; importing it
// again imports nothing; a wrong Content-Type is 415; an unreadable statement is 422.
func TestLedgerImportRoute(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	_, key := db.Owner(t, "alice")
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(),
		Ledger: &ledger.Service{Store: db.Store}}))
	t.Cleanup(srv.Close)
	csv := "Datum;Text;Betrag\n01.04.2026;Edeka;-12,30\n02.04.2026;Kaputt;abc\n"
	post := func(path, ct, body string) response {
		return doHTTP(t, srv.URL, request{method: "POST", path: path, key: key, body: body, header: map[string]string{"Content-Type": ct}})
	}
	var res ledger.ImportResult
	resp := post("/v1/ledger/import?account=Giro", "text/csv; charset=utf-8", csv)
	if err := json.Unmarshal(resp.body, &res); err != nil || resp.status != 200 || res.Imported != 1 || len(res.Rejected) != 1 || res.Rejected[0].Line != 3 {
		t.Fatalf("import: %d %s", resp.status, resp.body)
	}
	resp = post("/v1/ledger/import?account=Giro", "text/csv", csv)
	if err := json.Unmarshal(resp.body, &res); err != nil || resp.status != 200 || res.Imported != 0 || res.Duplicates != 1 {
		t.Fatalf("re-import: %d %s", resp.status, resp.body)
	}
	if resp := post("/v1/ledger/import?account=Giro", "application/json", csv); resp.status != 415 {
		t.Errorf("json content type: %d %s; want 415", resp.status, resp.body)
	}
	if resp := post("/v1/ledger/import?account=Giro", "text/csv", "just words\nmore words\n"); resp.status != 422 {
		t.Errorf("unreadable statement: %d %s; want 422", resp.status, resp.body)
	}
	if resp := post("/v1/ledger/import", "text/csv", csv); resp.status != 422 {
		t.Errorf("no account: %d %s; want 422", resp.status, resp.body)
	}
}

// TestLedgerReportRoute: the report sums an owner's imported statement by category; another
// owner sees nothing of it; a bad date or grouping is 422.
func TestLedgerReportRoute(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 4)
	_, alice := db.Owner(t, "alice")
	_, bob := db.Owner(t, "bob")
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(),
		Ledger: &ledger.Service{Store: db.Store}}))
	t.Cleanup(srv.Close)
	csv := "Date,Description,Amount\n2026-04-01,Edeka,-12.30\n2026-04-03,Edeka,-7.70\n2026-04-30,Salary,3000.00\n2026-05-01,Edeka,-1.00\n"
	if r := doHTTP(t, srv.URL, request{method: "POST", path: "/v1/ledger/import?account=Giro", key: alice, body: csv,
		header: map[string]string{"Content-Type": "text/csv"}}); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	get := func(key, q string) response {
		return doHTTP(t, srv.URL, request{method: "GET", path: "/v1/ledger/report?" + q, key: key})
	}
	var rep struct {
		Lines []struct {
			Key      string `json:"key"`
			OutMinor int64  `json:"out_minor"`
			InMinor  int64  `json:"in_minor"`
			Out      string `json:"out"`
		} `json:"lines"`
	}
	r := get(alice, "from=2026-04-01&to=2026-04-30&by=merchant")
	if err := json.Unmarshal(r.body, &rep); err != nil || r.status != 200 || len(rep.Lines) != 2 ||
		rep.Lines[0].Key != "Edeka" || rep.Lines[0].OutMinor != 2000 || rep.Lines[0].Out != "20.00 EUR" || rep.Lines[1].InMinor != 300000 {
		t.Fatalf("alice's report: %d %s", r.status, r.body)
	}
	r = get(bob, "from=2026-04-01&to=2026-04-30&by=merchant")
	if err := json.Unmarshal(r.body, &rep); err != nil || r.status != 200 || len(rep.Lines) != 0 {
		t.Fatalf("bob's report: %d %s; want nothing of alice's", r.status, r.body)
	}
	for _, q := range []string{"from=April&to=2026-04-30", "from=2026-04-01&to=2026-04-30&by=weekday", "from=2026-05-01&to=2026-04-30"} {
		if r := get(alice, q); r.status != 422 {
			t.Errorf("%s: %d %s; want 422", q, r.status, r.body)
		}
	}
}
