package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/store"
)

// Limits of the activity reads.
const (
	maxActivity = 100
	maxRules    = 1000
)

// controlView is GET /v1/control: the kill switches, gate mode and daily budget that apply
// to the owner.
type controlView struct {
	steward.Controls
	Stopped bool       `json:"stopped"`
	Mode    string     `json:"mode"`
	Budget  budgetView `json:"budget"`
}

// budgetView is the owner's use since midnight UTC and their daily limits, which an operator
// sets (steward owners budget). Every limit is finite: budgets fail closed.
type budgetView struct {
	MessagesToday int       `json:"messages_today"`
	MessageLimit  int       `json:"message_limit"`
	CostUSDToday  float64   `json:"cost_usd_today"`
	CostLimitUSD  float64   `json:"cost_limit_usd"`
	ResetsAt      time.Time `json:"resets_at"`
}

// control shows the owner's kill switch, the deployment's, the gate mode and the budget.
func (a *api) control(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var out controlView
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		c, u, err := tx.Safety.AdmitState(ctx)
		if err != nil {
			return err
		}
		out.Controls = c
		out.Budget = budgetView{MessagesToday: u.Messages, MessageLimit: u.MessageLimit,
			CostUSDToday: float64(u.CostMicros) / 1e6, CostLimitUSD: float64(u.CostLimitMicros) / 1e6,
			ResetsAt: time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)}
		out.Stopped, _ = c.Killed()
		out.Mode, err = tx.Safety.Mode(ctx)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// stop engages the owner's kill switch: POST /v1/control/stop {"reason"}. In-flight turns
// stop at their next step; new turns are refused with 423 until resume.
func (a *api) stop(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	body.Reason = strings.TrimSpace(body.Reason)
	if body.Reason == "" {
		body.Reason = "stopped by the owner"
	}
	if utf8.RuneCountInString(body.Reason) > 500 {
		fail(w, r, steward.Errorf(steward.CodeInvalid, "reason is longer than 500 characters"))
		return
	}
	if err := steward.CheckText("reason", body.Reason); err != nil {
		fail(w, r, err)
		return
	}
	a.setKill(w, r, true, body.Reason)
}

// resume releases the owner's kill switch: POST /v1/control/resume.
func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	a.setKill(w, r, false, "")
}

func (a *api) setKill(w http.ResponseWriter, r *http.Request, engaged bool, reason string) {
	ctx := r.Context()
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		return tx.Safety.SetKill(ctx, engaged, reason)
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	a.control(w, r)
}

// setMode sets the owner's gate mode: POST /v1/control/mode {"mode"}: ask (the default: a
// human decides writes no rule covers), deny (read-only safe mode: every write refused), or
// auto (writes run without asking; development only, refused unless the server allows it).
func (a *api) setMode(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	switch body.Mode {
	case "ask", "deny":
	case "auto":
		if !a.d.AllowAutoMode {
			fail(w, r, steward.Errorf(steward.CodeInvalid, "mode auto is disabled on this server (STEWARD_ALLOW_AUTO_MODE)"))
			return
		}
	default:
		fail(w, r, steward.Errorf(steward.CodeInvalid, `mode must be "ask", "deny" or "auto"`))
		return
	}
	ctx := r.Context()
	if err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		return tx.Safety.SetMode(ctx, body.Mode)
	}); err != nil {
		fail(w, r, err)
		return
	}
	a.control(w, r)
}

// ruleBody is POST /v1/rules.
type ruleBody struct {
	Tool      string          `json:"tool"`
	Effect    string          `json:"effect"`
	Predicate json.RawMessage `json:"predicate"`
	Note      string          `json:"note"`
}

// createRule stores a standing rule: POST /v1/rules {"tool","effect","predicate"?,"note"?}.
func (a *api) createRule(w http.ResponseWriter, r *http.Request) {
	var body ruleBody
	if err := decode(r, &body); err != nil {
		fail(w, r, err)
		return
	}
	if err := a.validRule(&body); err != nil {
		fail(w, r, err)
		return
	}
	ctx := r.Context()
	var rule steward.Rule
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		var err error
		rule, err = tx.Rules.Create(ctx, steward.Rule{Tool: body.Tool, Effect: body.Effect, Predicate: body.Predicate, Source: "api", Note: body.Note})
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rule)
}

// validRule checks a rule body: a registered write tool or "*" (every write tool), allow or
// deny, an object predicate, and text Postgres can store.
func (a *api) validRule(b *ruleBody) error {
	b.Tool, b.Effect = strings.TrimSpace(b.Tool), strings.TrimSpace(b.Effect)
	if len(b.Predicate) == 0 || string(b.Predicate) == "null" {
		b.Predicate = json.RawMessage(`{}`)
	}
	var pred map[string]any
	switch {
	case b.Tool == "":
		return steward.Errorf(steward.CodeInvalid, `tool is required: a tool name or "*"`)
	case b.Effect != "allow" && b.Effect != "deny":
		return steward.Errorf(steward.CodeInvalid, `effect must be "allow" or "deny"`)
	case json.Unmarshal(b.Predicate, &pred) != nil:
		return steward.Errorf(steward.CodeInvalid, "predicate must be a JSON object of argument values")
	case utf8.RuneCountInString(b.Note) > 500:
		return steward.Errorf(steward.CodeInvalid, "note is longer than 500 characters")
	}
	if err := a.d.Runner.Tools.CheckRuleTool(b.Tool); err != nil {
		return err
	}
	if err := steward.CheckText("note", b.Note); err != nil {
		return err
	}
	return checkJSONText("predicate", pred)
}

// checkJSONText applies steward.CheckText to every key and string inside a decoded JSON value.
func checkJSONText(field string, v any) error {
	switch v := v.(type) {
	case string:
		return steward.CheckText(field, v)
	case []any:
		for _, e := range v {
			if err := checkJSONText(field, e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range v {
			if err := steward.CheckText(field, k); err != nil {
				return err
			}
			if err := checkJSONText(field, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// rules lists the owner's standing rules: GET /v1/rules.
func (a *api) rules(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var rules []steward.Rule
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		var err error
		rules, err = tx.Rules.List(ctx)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	if len(rules) > maxRules {
		rules = rules[:maxRules]
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": orEmptySlice(rules)})
}

// deleteRule removes a standing rule: DELETE /v1/rules/{id} → 204.
func (a *api) deleteRule(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "rule")
	if !ok {
		return
	}
	ctx := r.Context()
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		return tx.Rules.Delete(ctx, id)
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// events returns one turn's trace, in order: GET /v1/turns/{id}/events.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "turn")
	if !ok {
		return
	}
	ctx := r.Context()
	var events []steward.Event
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		if _, err := tx.Turns.Get(ctx, id); err != nil {
			return err
		}
		var err error
		events, err = tx.Journal.TurnEvents(ctx, id)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"turn_id": id, "events": orEmptySlice(events)})
}

// activity is the owner's feed of turns, newest first, with lifecycle and trigger: GET
// /v1/activity.
func (a *api) activity(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var turns []steward.Turn
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		var err error
		turns, err = tx.Turns.List(ctx, "", maxActivity)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	views := make([]steward.View, len(turns))
	for i, t := range turns {
		views[i] = steward.ViewOf(t)
	}
	writeJSON(w, http.StatusOK, map[string]any{"activity": views})
}

// orEmptySlice makes a nil slice encode as [].
func orEmptySlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
