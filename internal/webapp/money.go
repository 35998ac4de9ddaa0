package webapp

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/ledger"
)

// The Money page (docs/WEBAPP.md, docs/LEDGER.md): the owner's accounts with their balances, a
// bank statement import (the ledger service's Import, as POST /v1/ledger/import), this
// month's spending by category, each budget as a bar and the latest transactions. It reads
// and writes only through ledger.Service (docs/ARCHITECTURE.md §7).

// maxUpload bounds a multipart form (a statement upload), CSRF field included.
const maxUpload = 2 << 20

func (a *web) moneyPage(w http.ResponseWriter, r *http.Request) {
	a.money(w, r, http.StatusOK, "")
}

// money renders the page; msg is the error of the last form (a refused import keeps the
// account, currency and date format typed), a flash what an import did.
func (a *web) money(w http.ResponseWriter, r *http.Request, status int, msg string) {
	const imp = "/money/import"
	me := current(r)
	if a.d.Ledger == nil {
		a.write(w, r, "money", http.StatusOK, func(p *page) {
			p.raw(`<h1>Money</h1><p>The ledger is off on this server.</p>`)
		})
		return
	}
	o, err := a.d.Ledger.Overview(r.Context(), me.OwnerID, a.now.Now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.write(w, r, "money", status, func(p *page) {
		p.raw(`<h1>Money</h1>`).pageError(r, msg, imp)
		if a.d.Trading.On() {
			p.raw(`<p><a href="/trading">Trading: your brokerage account, positions and orders</a></p>`)
		}
		if f, ok := takeFlash(w, r); ok {
			f.show(p)
		}
		// Accounts.
		p.raw(`<h2>Accounts</h2>`)
		if len(o.Accounts) == 0 {
			p.raw(`<p>No accounts yet: import a statement below.</p>`)
		} else {
			p.raw(`<div class="scroll"><table class="accounts stack"><thead><tr><th scope="col">Account</th><th scope="col">Kind</th><th scope="col" class="num">Balance</th></tr></thead><tbody>`)
			for _, x := range o.Accounts {
				p.raw(`<tr><td data-label="Account">`).text(x.Name).raw(`</td><td data-label="Kind">`).text(x.Kind).raw(`</td><td class="num" data-label="Balance">`)
				if x.BalanceMinor != nil {
					p.text(x.Balance)
				} else { // an expense or income account keeps no balance; its spending is below
					p.raw(`<span title="an `).text(x.Kind).raw(` account has no balance">—</span>`)
				}
				p.raw(`</td></tr>`)
			}
			p.raw(`</tbody></table></div>`)
		}
		// This month.
		p.raw(`<h2>This month (`).text(o.Month).raw(`)</h2>`)
		if len(o.Report.Lines) == 0 {
			p.raw(`<p>No transactions this month.</p>`)
		} else {
			p.raw(`<div class="scroll"><table class="report stack"><thead><tr><th scope="col">Category</th><th scope="col" class="num">Out</th><th scope="col" class="num">In</th><th scope="col" class="num">Net</th></tr></thead><tbody>`)
			for _, l := range o.Report.Lines {
				p.raw(`<tr><td data-label="Category">`).text(l.Key).raw(`</td><td class="num" data-label="Out">`).text(l.Out).raw(`</td><td class="num" data-label="In">`).text(l.In).
					raw(`</td><td class="num" data-label="Net">`).text(l.Net).raw(`</td></tr>`)
			}
			p.raw(`</tbody><tfoot>`)
			for _, l := range o.Report.Totals {
				p.raw(`<tr><th scope="row">Total</th><td class="num" data-label="Out">`).text(l.Out).raw(`</td><td class="num" data-label="In">`).text(l.In).
					raw(`</td><td class="num" data-label="Net">`).text(l.Net).raw(`</td></tr>`)
			}
			p.raw(`</tfoot></table></div>`)
		}
		// Budgets: a bar each, spent against the limit (a meter: the CSP forbids inline styles).
		p.raw(`<h2>Budgets</h2>`)
		if len(o.Budgets) == 0 {
			p.raw(`<p>No budgets. Ask Steward to set one ("budget 300 EUR a month for groceries").</p>`)
		}
		p.raw(`<ul class="budgets">`)
		for _, b := range o.Budgets {
			cls := "budget"
			if b.Over {
				cls += " over"
			}
			p.raw(`<li class="` + cls + `"><span class="label"><strong>`).text(b.Category).raw(`</strong> `).text(b.Spent).raw(` of `).text(b.Budget)
			if b.Over {
				p.raw(` · <span class="overtext">over budget by `).text(strings.TrimPrefix(b.Remaining, "-")).raw(`</span>`)
			} else {
				p.raw(` · `).text(b.Remaining).raw(` left`)
			}
			p.raw(`</span><meter min="0" max="`).text(strconv.FormatInt(max(b.BudgetMinor, 1), 10)).raw(`" low="`).
				text(strconv.FormatInt(b.BudgetMinor*8/10, 10)).raw(`" high="`).text(strconv.FormatInt(max(b.BudgetMinor, 1), 10)).
				raw(`" optimum="0" value="`).text(strconv.FormatInt(max(b.SpentMinor, 0), 10)).raw(`">`).text(b.Spent).raw(`</meter></li>`)
		}
		p.raw(`</ul>`)
		// Import.
		p.raw(`<h2>Import a bank statement</h2><form method="post" action="/money/import" enctype="multipart/form-data" class="import">`).formError(r, imp, msg).
			raw(`<label for="statement">Statement (CSV)</label><input id="statement" name="statement" type="file" accept=".csv,text/csv" required>`+
				`<label for="account">Account</label><input id="account" name="account" type="text" required maxlength="100"`).value(r, imp, "account", "Giro").
			raw(`><label for="currency">Currency</label><input id="currency" name="currency" type="text" maxlength="3"`).value(r, imp, "currency", "EUR").
			raw(`><label for="date_format">Date format</label><select id="date_format" name="date_format">`).
			option(r, imp, "date_format", "", "recognise it", true)
		for _, f := range ledger.DateFormats() {
			p.option(r, imp, "date_format", f, f, false)
		}
		p.raw(`</select>`).hidden(me.csrf).raw(`<button type="submit">Import</button></form>`)
		// Recent transactions.
		p.raw(`<h2>Recent transactions</h2>`)
		if len(o.Recent) == 0 {
			p.raw(`<p>None yet.</p>`)
			return
		}
		p.raw(`<div class="scroll"><table class="transactions stack"><thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col">Category</th><th scope="col" class="num">Amount</th></tr></thead><tbody>`)
		for _, t := range o.Recent {
			p.raw(`<tr><td data-label="Date">`).text(t.Date).raw(`</td><td data-label="Description">`).text(t.Description).raw(`</td><td data-label="Category">`).text(t.Category).
				raw(`</td><td class="num" data-label="Amount">`).text(t.Amount).raw(`</td></tr>`)
		}
		p.raw(`</tbody></table></div>`)
	})
}

// importStatement imports an uploaded statement: POST /money/import (multipart: statement,
// account, currency, date_format, csrf). It redirects to the page, which says what was
// imported; or the page comes back with the service's message and 422 when the statement
// cannot be read (nothing is imported).
func (a *web) importStatement(w http.ResponseWriter, r *http.Request) {
	if a.d.Ledger == nil {
		http.NotFound(w, r)
		return
	}
	f, _, err := r.FormFile("statement")
	if err != nil {
		a.money(w, r, http.StatusUnprocessableEntity, "Choose a CSV statement to import.")
		return
	}
	defer f.Close()
	body, err := io.ReadAll(f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	res, err := a.d.Ledger.Import(r.Context(), current(r).OwnerID, ledger.ImportRequest{Account: r.PostFormValue("account"),
		Currency: r.PostFormValue("currency"), DateFormat: r.PostFormValue("date_format"), CSV: body})
	if err != nil {
		if msg, ok := invalid(err); ok {
			a.money(w, r, http.StatusUnprocessableEntity, msg)
			return
		}
		a.fail(w, r, err)
		return
	}
	done := flash{Text: "Imported " + strconv.Itoa(res.Imported) + " transactions; " + strconv.Itoa(res.Duplicates) +
		" already in the book; " + strconv.Itoa(len(res.Rejected)) + " lines not read."}
	for _, x := range res.Rejected {
		done.Lines = append(done.Lines, "line "+strconv.Itoa(x.Line)+": "+x.Reason)
	}
	redirectWith(w, r, "/money", done)
}

// tooLarge answers a form over its limit.
func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}
