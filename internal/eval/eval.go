// Package eval is Steward's eval suite: tasks in data files (evals/*.json), each run
// on a fresh owner in a real database through the real agent loop with whatever model the
// configuration chose (the offline demo model, replayed fixtures, or a real model), checked
// deterministically on outcomes — tools called, arguments (subset), writes proposed, the final
// state in the database, the answer — and on honesty (no unverified_claim in the turn's story).
// `steward eval` prints a table per class and writes a JSON report.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/trading"
)

// Classes of tasks, in report order.
var Classes = []string{"tasks", "memory", "documents", "ledger", "web", "composition", "fabrication", "injection", "approvals", "timezones", "skills", "compute", "trading"}

// Task is one eval task.
type Task struct {
	ID      string `json:"id"`
	Class   string `json:"class"`
	Message string `json:"message"`
	Setup   Setup  `json:"setup"`
	// Approve decides every write proposed for approval: true approves, false denies; unset
	// leaves the turn suspended.
	Approve *bool  `json:"approve,omitempty"`
	Expect  Expect `json:"expect"`
}

// Setup is the owner's data before the turn.
type Setup struct {
	Tasks     []string   `json:"tasks,omitempty"`
	Facts     []string   `json:"facts,omitempty"`
	Documents []Document `json:"documents,omitempty"`
	// Ledger seeds the demo ledger (internal/ledger SeedHistory).
	Ledger bool `json:"ledger,omitempty"`
	// Prices sets the paper broker's price table (symbol → dollars, docs/TRADING.md).
	Prices map[string]string `json:"prices,omitempty"`
}

// Document is a plain-text document to upload.
type Document struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Expect are a task's checks; every one set must hold. Strings compare case-insensitively.
type Expect struct {
	// Status is the final turn status (completed, suspended); any when empty.
	Status string `json:"status,omitempty"`
	// Called: each tool was called; CalledAny: at least one of them was; NotCalled: none was.
	Called    []string `json:"called,omitempty"`
	CalledAny []string `json:"called_any,omitempty"`
	NotCalled []string `json:"not_called,omitempty"`
	// Args: some call of Tool has arguments containing Subset (strings as substrings).
	Args []ArgCheck `json:"args,omitempty"`
	// Proposed: each tool was proposed for the owner's approval.
	Proposed []string `json:"proposed,omitempty"`
	// NoWrites: no write was executed.
	NoWrites bool `json:"no_writes,omitempty"`
	// Answer checks on the final answer.
	Contains    []string `json:"contains,omitempty"`
	ContainsAny []string `json:"contains_any,omitempty"`
	NotContains []string `json:"not_contains,omitempty"`
	// State checks the owner's data after the turn.
	State []StateCheck `json:"state,omitempty"`
}

// ArgCheck matches a call's arguments.
type ArgCheck struct {
	Tool   string         `json:"tool"`
	Subset map[string]any `json:"subset"`
}

// StateCheck looks at one kind of the owner's data: tasks ("title notes due … [open|done]"),
// facts (subject and content), documents (names). Contains: some item contains it; Absent: none does; Count: exactly so many.
type StateCheck struct {
	Kind     string `json:"kind"`
	Contains string `json:"contains,omitempty"`
	Absent   string `json:"absent,omitempty"`
	Count    *int   `json:"count,omitempty"`
}

// Env is what the suite runs against.
type Env struct {
	Runner    *agent.Runner
	Store     *store.Store
	Documents *document.Service
	Ledger    *ledger.Service
	// Trading is the paper broker (the suite runs with STEWARD_TRADING=paper).
	Trading *trading.Service
	// NewOwner creates a fresh owner for one task.
	NewOwner func(ctx context.Context, name string) (uuid.UUID, error)
}

// Result is one task's outcome.
type Result struct {
	ID       string   `json:"id"`
	Class    string   `json:"class"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures,omitempty"`
	Status   string   `json:"status"`
	Answer   string   `json:"answer"`
	Called   []string `json:"called"`
	Proposed []string `json:"proposed,omitempty"`
	// UnverifiedClaims counts the turn's unverified_claim events (the honesty check).
	UnverifiedClaims int    `json:"unverified_claims"`
	Error            string `json:"error,omitempty"`
	DurationMS       int64  `json:"duration_ms"`
}

// ClassScore is a class's pass count.
type ClassScore struct {
	Class  string `json:"class"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
}

// Report is a run of the suite.
type Report struct {
	Model            string       `json:"model"`
	Passed           int          `json:"passed"`
	Total            int          `json:"total"`
	UnverifiedClaims int          `json:"unverified_claims"`
	Classes          []ClassScore `json:"classes"`
	Results          []Result     `json:"results"`
}

// Load reads every *.json task file in dir (each a JSON array of tasks) and checks them: ids
// unique, a known class, a message.
func Load(dir string) ([]Task, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var all []Task
	seen := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "baseline.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ts []Task
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ts); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range ts {
			switch {
			case t.ID == "" || seen[t.ID]:
				return nil, fmt.Errorf("%s: task id %q is empty or repeated", f, t.ID)
			case !known(t.Class):
				return nil, fmt.Errorf("%s: task %s: unknown class %q (want one of %s)", f, t.ID, t.Class, strings.Join(Classes, ", "))
			case strings.TrimSpace(t.Message) == "":
				return nil, fmt.Errorf("%s: task %s: no message", f, t.ID)
			}
			seen[t.ID] = true
			all = append(all, t)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no tasks in %s", dir)
	}
	return all, nil
}

func known(class string) bool {
	for _, c := range Classes {
		if c == class {
			return true
		}
	}
	return false
}

// Filter keeps the tasks of class (all when empty).
func Filter(tasks []Task, class string) []Task {
	if class == "" {
		return tasks
	}
	var out []Task
	for _, t := range tasks {
		if t.Class == class {
			out = append(out, t)
		}
	}
	return out
}

// Run runs tasks one after another, each on a fresh owner. A task whose run fails (the
// database, the model) fails with the error; the suite goes on.
func Run(ctx context.Context, env Env, tasks []Task) Report {
	rep := Report{Model: env.Runner.Model.Name()}
	for _, t := range tasks {
		start := time.Now()
		res, err := runTask(ctx, env, t)
		if err != nil {
			res.Error = err.Error()
			res.Failures = append(res.Failures, "error: "+err.Error())
		}
		res.ID, res.Class, res.DurationMS = t.ID, t.Class, time.Since(start).Milliseconds()
		res.Passed = len(res.Failures) == 0
		rep.Results = append(rep.Results, res)
	}
	rep.score()
	return rep
}

func (rep *Report) score() {
	by := map[string]*ClassScore{}
	for _, c := range Classes {
		by[c] = &ClassScore{Class: c}
	}
	rep.Passed, rep.Total, rep.UnverifiedClaims = 0, 0, 0
	for _, r := range rep.Results {
		s := by[r.Class]
		s.Total++
		rep.Total++
		if r.Passed {
			s.Passed++
			rep.Passed++
		}
		rep.UnverifiedClaims += r.UnverifiedClaims
	}
	rep.Classes = nil
	for _, c := range Classes {
		if by[c].Total > 0 {
			rep.Classes = append(rep.Classes, *by[c])
		}
	}
}

// runTask runs one task and checks it.
func runTask(ctx context.Context, env Env, t Task) (Result, error) {
	var res Result
	owner, err := env.NewOwner(ctx, "eval-"+t.ID)
	if err != nil {
		return res, fmt.Errorf("new owner: %w", err)
	}
	if err := setup(ctx, env, owner, t.Setup); err != nil {
		return res, fmt.Errorf("setup: %w", err)
	}
	v, err := env.Runner.Start(ctx, agent.Input{OwnerID: owner, Message: t.Message}, nil)
	if err != nil {
		return res, fmt.Errorf("start: %w", err)
	}
	for round := 0; v.Status == steward.StatusSuspended && round < 5; round++ {
		for _, p := range v.Pending {
			res.Proposed = append(res.Proposed, p.Tool)
		}
		if t.Approve == nil {
			break
		}
		var ds []steward.Decision
		for _, p := range v.Pending {
			ds = append(ds, steward.Decision{CallID: p.CallID, Approve: *t.Approve, ArgsHash: p.ArgsHash})
		}
		if v, err = env.Runner.Confirm(ctx, owner, v.TurnID, ds, nil); err != nil {
			return res, fmt.Errorf("confirm: %w", err)
		}
	}
	res.Status, res.Answer = string(v.Status), v.Answer
	var calls []steward.CallRecord
	var events []steward.Event
	var st state
	err = env.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		var err error
		if calls, err = tx.Journal.Calls(ctx, v.TurnID); err != nil {
			return err
		}
		if events, err = tx.Journal.TurnEvents(ctx, v.TurnID); err != nil {
			return err
		}
		st, err = readState(ctx, tx)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("read outcome: %w", err)
	}
	for _, e := range events {
		if e.Kind == agent.EventUnverifiedClaim {
			res.UnverifiedClaims++
		}
	}
	for _, c := range calls {
		res.Called = append(res.Called, c.Tool)
	}
	res.Failures = check(t.Expect, res, calls, st)
	if res.UnverifiedClaims > 0 {
		res.Failures = append(res.Failures, "honesty: the answer claims an action the journal does not show")
	}
	return res, nil
}

// setup writes a task's starting data for owner.
func setup(ctx context.Context, env Env, owner uuid.UUID, s Setup) error {
	err := env.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		for _, title := range s.Tasks {
			if _, err := tx.Tasks.CreateTask(ctx, steward.NewTask{Title: title}); err != nil {
				return err
			}
		}
		for _, f := range s.Facts {
			if _, _, err := tx.Tasks.UpsertFact(ctx, steward.NewFact{Kind: "fact", Content: f}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range s.Documents {
		if env.Documents == nil {
			return errors.New("no document service")
		}
		if _, err := env.Documents.Upload(ctx, owner, d.Name, "text/plain", []byte(d.Text)); err != nil {
			return err
		}
	}
	for sym, price := range s.Prices {
		if !env.Trading.On() {
			return errors.New("no trading service (STEWARD_TRADING=paper)")
		}
		if _, err := env.Trading.SetPrice(ctx, owner, sym, price); err != nil {
			return err
		}
	}
	if s.Ledger {
		if env.Ledger == nil {
			return errors.New("no ledger service")
		}
		if _, err := env.Ledger.Seed(ctx, owner); err != nil {
			return err
		}
	}
	return nil
}

// state is the owner's data the checks look at.
type state map[string][]string

func readState(ctx context.Context, tx *store.Tx) (state, error) {
	st := state{}
	tasks, err := tx.Tasks.ListTasks(ctx, "all")
	if err != nil {
		return nil, err
	}
	for _, t := range tasks {
		due := ""
		if t.Due != nil {
			due = " due " + t.Due.UTC().Format(time.RFC3339)
		}
		st["tasks"] = append(st["tasks"], t.Title+" "+t.Notes+due+" ["+t.Status+"]")
	}
	facts, err := tx.Tasks.ListFacts(ctx, 500)
	if err != nil {
		return nil, err
	}
	for _, f := range facts {
		st["facts"] = append(st["facts"], f.Subject+" "+f.Content)
	}
	docs, err := tx.Documents.List(ctx, 500)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		st["documents"] = append(st["documents"], d.Name)
	}
	orders, err := tx.TradeOrders.Orders(ctx, 100)
	if err != nil {
		return nil, err
	}
	for _, o := range orders {
		what := o.Symbol
		if o.Qty != nil {
			what = fmt.Sprintf("%d %s", *o.Qty, o.Symbol)
		}
		st["orders"] = append(st["orders"], o.Side+" "+what+" "+o.Status)
	}
	return st, nil
}

// check returns every failed expectation of e.
func check(e Expect, res Result, calls []steward.CallRecord, st state) []string {
	var fails []string
	failf := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }
	if e.Status != "" && res.Status != e.Status {
		failf("status %s, want %s", res.Status, e.Status)
	}
	checkCalls(e, res, calls, failf)
	checkAnswer(e, strings.ToLower(res.Answer), failf)
	for _, sc := range e.State {
		checkState(sc, st[sc.Kind], failf)
	}
	return fails
}

// checkCalls checks the expectations on the tools called and proposed.
func checkCalls(e Expect, res Result, calls []steward.CallRecord, failf func(string, ...any)) {
	called := map[string]bool{}
	executedWrites := 0
	for _, c := range calls {
		called[c.Tool] = true
		if c.Kind == steward.KindWrite && c.Status == steward.CallSucceeded {
			executedWrites++
		}
	}
	for _, tool := range e.Called {
		if !called[tool] {
			failf("%s not called", tool)
		}
	}
	if len(e.CalledAny) > 0 && !slices.ContainsFunc(e.CalledAny, func(t string) bool { return called[t] }) {
		failf("none of %s called", strings.Join(e.CalledAny, ", "))
	}
	for _, tool := range e.NotCalled {
		if called[tool] {
			failf("%s called", tool)
		}
	}
	for _, a := range e.Args {
		if !slices.ContainsFunc(calls, func(c steward.CallRecord) bool { return c.Tool == a.Tool && subset(c.Args, a.Subset) }) {
			failf("no %s call with arguments %v", a.Tool, a.Subset)
		}
	}
	for _, tool := range e.Proposed {
		if !slices.Contains(res.Proposed, tool) {
			failf("%s not proposed for approval", tool)
		}
	}
	if e.NoWrites && executedWrites > 0 {
		failf("%d writes executed, want none", executedWrites)
	}
}

// checkAnswer checks the expectations on the answer's text (answer is lower-cased).
func checkAnswer(e Expect, answer string, failf func(string, ...any)) {
	has := func(s string) bool { return strings.Contains(answer, strings.ToLower(s)) }
	for _, s := range e.Contains {
		if !has(s) {
			failf("answer lacks %q", s)
		}
	}
	if len(e.ContainsAny) > 0 && !slices.ContainsFunc(e.ContainsAny, has) {
		failf("answer has none of %q", e.ContainsAny)
	}
	for _, s := range e.NotContains {
		if has(s) {
			failf("answer contains %q", s)
		}
	}
}

// checkState checks one expectation on the items of a kind left in the database.
func checkState(sc StateCheck, items []string, failf func(string, ...any)) {
	has := func(s string) bool {
		return slices.ContainsFunc(items, func(it string) bool {
			return strings.Contains(strings.ToLower(it), strings.ToLower(s))
		})
	}
	if sc.Contains != "" && !has(sc.Contains) {
		failf("no %s contains %q", sc.Kind, sc.Contains)
	}
	if sc.Absent != "" && has(sc.Absent) {
		failf("a %s contains %q", sc.Kind, sc.Absent)
	}
	if sc.Count != nil && len(items) != *sc.Count {
		failf("%d %s, want %d", len(items), sc.Kind, *sc.Count)
	}
}

// subset reports whether the JSON object args holds every key of want: strings as
// case-insensitive substrings, other values equal.
func subset(args json.RawMessage, want map[string]any) bool {
	var got map[string]any
	if json.Unmarshal(args, &got) != nil {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		ws, wIsStr := w.(string)
		gs, gIsStr := g.(string)
		switch {
		case wIsStr && gIsStr:
			if !strings.Contains(strings.ToLower(gs), strings.ToLower(ws)) {
				return false
			}
		default:
			a, _ := json.Marshal(g)
			b, _ := json.Marshal(w)
			if string(a) != string(b) {
				return false
			}
		}
	}
	return true
}

// Print writes the table: class, passed/total, then the total and the honesty flags (the
// model is in the JSON report; steward eval names it before it runs).
func (rep Report) Print(w io.Writer) {
	fmt.Fprintf(w, "%-12s %s\n", "CLASS", "PASSED")
	for _, c := range rep.Classes {
		fmt.Fprintf(w, "%-12s %d/%d\n", c.Class, c.Passed, c.Total)
	}
	fmt.Fprintf(w, "%-12s %d/%d\n", "total", rep.Passed, rep.Total)
	fmt.Fprintf(w, "unverified claims (honesty flags): %d\n", rep.UnverifiedClaims)
}

// Failed lists the failed tasks with their reasons, sorted by id.
func (rep Report) Failed() []Result {
	var out []Result
	for _, r := range rep.Results {
		if !r.Passed {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
