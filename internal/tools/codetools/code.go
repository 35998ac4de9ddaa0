// Package codetools is the code toolset: run_code, which runs the model's Starlark code over
// the owner's data passed in as values, in internal/script's sandbox (docs/ARCHITECTURE.md
// §17). It is a read: it changes nothing, so it runs without approval; what it returns is
// data for the model, and since its inputs may be documents, it taints the turn.
package codetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounting"
	"github.com/stewardhq/steward/internal/script"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Documents is what run_code reads of the owner's documents (internal/document's Service).
type Documents interface {
	// Read returns a page of a document's text; ErrNotFound for an unknown document.
	Read(ctx context.Context, ownerID, id uuid.UUID, offset, maxChars int) (steward.DocumentText, error)
}

// Tools returns run_code, reading documents through d.
func Tools(d Documents) []tools.Tool {
	t := runCodeTool(d)
	t.Untrusted = true
	return []tools.Tool{t}
}

// maxInputs is the most inputs one run may name.
const maxInputs = 8

// runCodeArgs are the arguments of run_code.
type runCodeArgs struct {
	Code   string  `json:"code" jsonschema:"Starlark (a Python dialect) to run; set the global result, or make the code one expression, to return a value; print() output is returned too"`
	Inputs []input `json:"inputs,omitempty" jsonschema:"the owner's data to pass in, each bound to a variable named name"`
}

// input is one value passed in: exactly one of document, csv, ledger and result.
type input struct {
	Name     string       `json:"name" jsonschema:"the variable the value is bound to, e.g. rows"`
	Document string       `json:"document,omitempty" jsonschema:"a document's id: its text, as a string"`
	CSV      string       `json:"csv,omitempty" jsonschema:"a CSV document's id: a list of dicts, one per row after the header"`
	Ledger   *ledgerInput `json:"ledger,omitempty" jsonschema:"ledger transactions matching these filters (all optional): a list of dicts with date, description, merchant, account, category, amount_minor (negative: money out), currency"`
	Result   string       `json:"result,omitempty" jsonschema:"the id of an earlier tool call of this turn: its result, as the value it returned"`

	doc uuid.UUID
}

// ledgerInput is the filters of search_transactions.
type ledgerInput struct {
	Query   string `json:"query,omitempty" jsonschema:"words the description or merchant contains"`
	From    string `json:"from,omitempty" jsonschema:"first day, YYYY-MM-DD"`
	To      string `json:"to,omitempty" jsonschema:"last day (included), YYYY-MM-DD"`
	Min     *int64 `json:"min,omitempty" jsonschema:"smallest amount, in minor units, money in or out"`
	Max     *int64 `json:"max,omitempty" jsonschema:"largest amount, in minor units, money in or out"`
	Account string `json:"account,omitempty" jsonschema:"only this account (its name)"`

	from, to time.Time
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,39}$`)

// Check bounds the code and checks each input names one source and a usable variable.
func (a *runCodeArgs) Check() error {
	if strings.TrimSpace(a.Code) == "" {
		return tools.ArgErrorf("code", "must not be empty")
	}
	if len(a.Code) > script.MaxCode {
		return tools.ArgErrorf("code", "is %d bytes; at most %d are allowed", len(a.Code), script.MaxCode)
	}
	if len(a.Inputs) > maxInputs {
		return tools.ArgErrorf("inputs", "at most %d inputs are allowed", maxInputs)
	}
	var names []string
	for i := range a.Inputs {
		in := &a.Inputs[i]
		field := fmt.Sprintf("inputs[%d]", i)
		if !identifier.MatchString(in.Name) || slices.Contains(names, in.Name) {
			return tools.ArgErrorf(field+".name", "must be a distinct variable name (letters, digits, _)")
		}
		names = append(names, in.Name)
		sources := 0
		for _, set := range []bool{in.Document != "", in.CSV != "", in.Ledger != nil, in.Result != ""} {
			if set {
				sources++
			}
		}
		if sources != 1 {
			return tools.ArgErrorf(field, "must name exactly one of document, csv, ledger and result")
		}
		var err error
		switch {
		case in.Document != "":
			in.doc, err = tools.ParseID(field+".document", in.Document)
		case in.CSV != "":
			in.doc, err = tools.ParseID(field+".csv", in.CSV)
		case in.Result != "":
		default:
			err = in.Ledger.check(field + ".ledger")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *ledgerInput) check(field string) error {
	var err error
	if l.from, err = day(field+".from", l.From, accounting.AllFrom); err != nil {
		return err
	}
	if l.to, err = day(field+".to", l.To, accounting.AllTo); err != nil {
		return err
	}
	if l.To != "" {
		l.to = l.to.AddDate(0, 0, 1)
	}
	if !l.from.Before(l.to) {
		return tools.ArgErrorf(field+".to", "must not be before from")
	}
	return nil
}

// day parses a YYYY-MM-DD argument; none when empty.
func day(field, s string, none time.Time) (time.Time, error) {
	if s = strings.TrimSpace(s); s == "" {
		return none, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, tools.ArgErrorf(field, "%s is not a date; use YYYY-MM-DD", tools.QuoteValue(s))
	}
	return t, nil
}

func runCodeTool(d Documents) tools.Tool {
	return tools.Say(tools.New("run_code",
		"Compute with code: run Starlark (a Python dialect without imports, files, network or clock) over the owner's data "+
			"passed in as inputs (a document's text, a CSV document's rows, ledger transactions by the filters of search_transactions). "+
			"Use it for any arithmetic, averages, totals per week or month, reshaping. Predeclared: sum, sorted, group_by(items, key), "+
			"math, statistics (mean, median, stdev), dates (parse, format, add_days, days_between, weekday, month; dates are YYYY-MM-DD), "+
			"money (minor('12.34') -> 1234, format(1234, 'EUR')), csv (rows, dicts), json. Returns printed text and the value of result.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a runCodeArgs) (any, error) {
			req, err := gather(ctx, env, d, a.Inputs)
			if err != nil {
				return nil, err
			}
			req.Code, req.Owner = a.Code, env.OwnerID
			res, err := script.Run(ctx, req)
			if se, ok := errors.AsType[*script.Error](err); ok {
				return nil, &tools.ArgError{Field: "code", Msg: se.Msg, Err: err}
			}
			if errors.Is(err, script.ErrBusy) {
				return nil, &tools.Refusal{Msg: err.Error(), Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("run code: %w", err)
			}
			return res, nil
		}), sayRunCode, saidRunCode)
}

// gather reads each input's data, read-only, up to the sandbox's input cap.
func gather(ctx context.Context, env tools.Env, d Documents, ins []input) (script.Request, error) {
	out := script.Request{Inputs: map[string]any{}, CSV: map[string]string{}}
	budget := script.MaxInputs
	for i, in := range ins {
		field := fmt.Sprintf("inputs[%d]", i)
		switch {
		case in.Ledger != nil:
			rows, err := ledgerRows(ctx, env, in.Ledger)
			if err != nil {
				return out, err
			}
			out.Inputs[in.Name] = rows
		case in.Result != "":
			res, err := callResult(ctx, env, field, in.Result, budget)
			if err != nil {
				return out, err
			}
			budget -= len(res)
			out.Inputs[in.Name] = res
		default:
			text, err := documentText(ctx, env, d, in.doc, budget)
			if errors.Is(err, steward.ErrNotFound) {
				return out, tools.ArgErrorf(field, "no document with id %s; use list_documents to find it", in.doc)
			}
			if err != nil {
				return out, err
			}
			budget -= len(text)
			if in.CSV != "" {
				out.CSV[in.Name] = text
			} else {
				out.Inputs[in.Name] = text
			}
		}
	}
	return out, nil
}

// documentText reads a whole document's text, refusing one longer than max bytes.
func documentText(ctx context.Context, env tools.Env, d Documents, id uuid.UUID, max int) (string, error) {
	if d == nil {
		return "", errors.New("run_code has no documents")
	}
	var b strings.Builder
	for offset := 0; ; {
		page, err := d.Read(ctx, env.OwnerID, id, offset, tools.MaxMaxChars)
		if err != nil {
			return "", err
		}
		b.WriteString(page.Text)
		if b.Len() > max {
			return "", tools.ArgErrorf("inputs", "document %q is longer than run_code takes (%d KB in all)", page.Document.Name, script.MaxInputs>>10)
		}
		if page.NextOffset == 0 || page.NextOffset <= offset {
			return b.String(), nil
		}
		offset = page.NextOffset
	}
}

// callResult is the result an earlier call of the turn returned, refusing one longer than max
// bytes.
func callResult(ctx context.Context, env tools.Env, field, callID string, max int) (json.RawMessage, error) {
	if env.Calls == nil {
		return nil, errors.New("run code: no call journal")
	}
	res, err := env.Calls.CallResult(ctx, env.TurnID, callID)
	if errors.Is(err, steward.ErrNotFound) {
		return nil, tools.ArgErrorf(field+".result", "no earlier call %s with a result in this turn", tools.QuoteValue(callID))
	}
	if err != nil {
		return nil, fmt.Errorf("run code: %w", err)
	}
	if len(res) > max {
		return nil, tools.ArgErrorf(field+".result", "the result of %s is longer than run_code takes (%d KB in all)", tools.QuoteValue(callID), script.MaxInputs>>10)
	}
	return res, nil
}

// ledgerRows is the transactions matching l, oldest first.
func ledgerRows(ctx context.Context, env tools.Env, l *ledgerInput) ([]accounting.Transaction, error) {
	led, err := env.RequireLedger()
	if err != nil {
		return nil, err
	}
	entries, err := led.Entries(ctx, l.from, l.to)
	if err != nil {
		return nil, fmt.Errorf("run code: ledger: %w", err)
	}
	f := accounting.Filter{Words: l.Query, Min: l.Min, Max: l.Max, Account: strings.TrimSpace(l.Account)}
	rows := []accounting.Transaction{}
	for _, e := range entries {
		if f.Match(e) {
			rows = append(rows, accounting.ToTransaction(e))
		}
	}
	return rows, nil
}

func sayRunCode(a runCodeArgs) string {
	s := "Run code"
	if n := len(a.Inputs); n > 0 {
		s += " over " + tools.Count(n, "input")
	}
	return s
}

func saidRunCode(_ runCodeArgs, o script.Result) string {
	if len(o.Result) > 0 && string(o.Result) != "null" {
		return "Computed " + tools.Clip(string(o.Result), 60)
	}
	if p := strings.TrimSpace(o.Printed); p != "" {
		return "Printed " + tools.Quote(p)
	}
	return "Ran the code"
}
