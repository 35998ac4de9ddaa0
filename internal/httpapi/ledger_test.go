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
