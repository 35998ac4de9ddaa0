package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/steward"
)

// importStatement imports a bank statement into the owner's ledger:
// POST /v1/ledger/import?account=NAME[&currency=EUR][&date_format=DD.MM.YYYY] with a text/csv
// body → 200 {imported, duplicates, rejected: [{line, reason}]}.
func (a *api) importStatement(w http.ResponseWriter, r *http.Request) {
	if a.d.Ledger == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "the ledger is not configured on this server"))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/csv" {
		fail(w, r, errorf(http.StatusUnsupportedMediaType, steward.CodeInvalid, "Content-Type must be text/csv"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
			fail(w, r, errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "request body is larger than %d bytes", tooBig.Limit))
			return
		}
		fail(w, r, errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the request body"))
		return
	}
	q := r.URL.Query()
	res, err := a.d.Ledger.Import(r.Context(), principal(r.Context()).OwnerID, ledger.ImportRequest{
		Account: q.Get("account"), Currency: q.Get("currency"), DateFormat: q.Get("date_format"), CSV: body})
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// ledgerReport answers the owner's money out and in, grouped:
// GET /v1/ledger/report?from=YYYY-MM-DD&to=YYYY-MM-DD[&by=category|month|merchant|account]
// → 200 {from, to, by, lines: [{key, currency, count, out_minor, in_minor, net_minor, out, in, net}], totals}.
func (a *api) ledgerReport(w http.ResponseWriter, r *http.Request) {
	if a.d.Ledger == nil {
		fail(w, r, errorf(http.StatusNotFound, steward.CodeNotFound, "the ledger is not configured on this server"))
		return
	}
	q := r.URL.Query()
	rep, err := a.d.Ledger.Report(r.Context(), principal(r.Context()).OwnerID, q.Get("from"), q.Get("to"), q.Get("by"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
