// Package rules is the owner's standing rules: the allow and deny rules the gate applies to
// write tools before it asks (docs/ARCHITECTURE.md §2, §7). internal/httpapi serves it at
// /v1/rules.
package rules

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/tools"
)

// Limits of the service.
const (
	MaxRules = 1000 // a list shows at most this many
	MaxNote  = 500  // characters
)

// ToolChecker says whether a rule may name a tool — a registered write tool or "*" — with
// this effect (no allow rule for a tool the gate always asks about) and these arguments in
// its predicate. *tools.Registry implements it.
type ToolChecker interface {
	CheckRule(tool, effect string, args []string) error
}

// Service lists, creates and deletes an owner's standing rules. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	Tools ToolChecker
}

// NewRule is a rule as the owner writes it (the body of POST /v1/rules).
type NewRule struct {
	Tool      string          `json:"tool"`
	Effect    string          `json:"effect"`
	Predicate json.RawMessage `json:"predicate"`
	// Match is steward.MatchExact (the arguments are exactly the predicate) or
	// steward.MatchPattern (the arguments the predicate names have these values, the others
	// anything). Empty is exact when the predicate names an argument, else pattern: a rule
	// without a predicate covers any arguments.
	Match string `json:"match"`
	Note  string `json:"note"`
}

// List returns the owner's standing rules (at most MaxRules).
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]steward.Rule, error) {
	var rules []steward.Rule
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rules, err = tx.Rules.List(ctx)
		return err
	})
	if len(rules) > MaxRules {
		rules = rules[:MaxRules]
	}
	return rules, err
}

// Create checks and stores a rule the owner wrote (source "api").
func (s *Service) Create(ctx context.Context, ownerID uuid.UUID, r NewRule) (steward.Rule, error) {
	if err := s.valid(&r); err != nil {
		return steward.Rule{}, err
	}
	var rule steward.Rule
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rule, err = tx.Rules.Create(ctx, steward.Rule{Tool: r.Tool, Effect: r.Effect, Predicate: r.Predicate, Match: r.Match, Source: "api", Note: r.Note})
		return err
	})
	return rule, err
}

// Delete removes one of the owner's rules; another owner's or an unknown id is not found.
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		return tx.Rules.Delete(ctx, id)
	})
}

// valid checks a rule: a registered write tool or "*" (every write tool), allow or deny —
// allow only for a tool an allow rule can run (tools.Tool.NoRuleWhy) —, an object predicate ({} when absent) naming only arguments the tool has, exact or pattern
// (see NewRule.Match), text Postgres can store, and a note without control or invisible
// formatting characters (steward.CheckName).
func (s *Service) valid(r *NewRule) error {
	r.Tool, r.Effect, r.Match = strings.TrimSpace(r.Tool), strings.TrimSpace(r.Effect), strings.TrimSpace(r.Match)
	if len(r.Predicate) == 0 || string(r.Predicate) == "null" {
		r.Predicate = json.RawMessage(`{}`)
	}
	var pred map[string]any
	switch {
	case r.Tool == "":
		return steward.Errorf(steward.CodeInvalid, `tool is required: a tool name or "*"`)
	case r.Effect != "allow" && r.Effect != "deny":
		return steward.Errorf(steward.CodeInvalid, `effect must be "allow" or "deny"`)
	case r.Match != "" && r.Match != steward.MatchExact && r.Match != steward.MatchPattern:
		return steward.Errorf(steward.CodeInvalid, `match must be %q (the call's arguments are exactly the predicate) or %q (the arguments the predicate names have its values, other arguments anything)`,
			steward.MatchExact, steward.MatchPattern)
	case json.Unmarshal(r.Predicate, &pred) != nil:
		return steward.Errorf(steward.CodeInvalid, "predicate must be a JSON object of argument values")
	}
	if s.Tools == nil {
		return errors.New("rules: no tool registry to check the rule against")
	}
	if err := s.Tools.CheckRule(r.Tool, r.Effect, slices.Sorted(maps.Keys(pred))); err != nil {
		return err
	}
	if r.Match == "" {
		r.Match = steward.MatchExact
		if len(pred) == 0 {
			r.Match = steward.MatchPattern
		}
	}
	if err := checkNote(&r.Note); err != nil {
		return err
	}
	return checkJSONText("predicate", pred)
}

// checkNote checks a rule's note, if it has one: no control or invisible formatting
// character (steward.CheckName), at most MaxNote characters.
func checkNote(note *string) error {
	if strings.TrimSpace(*note) == "" {
		return nil
	}
	n, err := steward.CheckName("the rule's note", *note, MaxNote)
	if err != nil {
		return err
	}
	*note = n
	return nil
}

// Describe says in words which calls a rule covers, as the web app and the CLI list it:
// "only a call of create_task whose arguments are exactly {"title":"milk"}", or "any call of
// create_task whose title is "milk", other arguments anything".
func Describe(r steward.Rule) string {
	tool := r.Tool
	if tool == tools.RuleTool {
		tool = "any write tool"
	}
	var pred map[string]json.RawMessage
	if len(r.Predicate) > 0 && json.Unmarshal(r.Predicate, &pred) != nil {
		return "nothing (its predicate cannot be read)"
	}
	switch {
	case r.Match == steward.MatchExact && len(pred) == 0:
		return "only a call of " + tool + " with no arguments"
	case r.Match == steward.MatchExact:
		exact, _ := tools.CanonicalArgs(r.Predicate) // it decoded above
		return "only a call of " + tool + " whose arguments are exactly " + string(exact)
	case len(pred) == 0:
		return "any call of " + tool + ", any arguments"
	}
	var is []string
	for _, k := range slices.Sorted(maps.Keys(pred)) {
		v, _ := tools.Canonical(pred[k]) // it decoded above
		is = append(is, k+" is "+string(v))
	}
	return "any call of " + tool + " whose " + strings.Join(is, " and ") + ", other arguments anything"
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
