// Package rules is the owner's standing rules: the allow and deny rules the gate applies to
// write tools before it asks (docs/ARCHITECTURE.md §2, §7). internal/httpapi serves it at
// /v1/rules.
package rules

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Limits of the service.
const (
	MaxRules = 1000 // a list shows at most this many
	MaxNote  = 500  // characters
)

// ToolChecker says whether a rule may name a tool: a registered write tool or "*".
// *tools.Registry implements it.
type ToolChecker interface {
	CheckRuleTool(name string) error
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
	Note      string          `json:"note"`
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
		rule, err = tx.Rules.Create(ctx, steward.Rule{Tool: r.Tool, Effect: r.Effect, Predicate: r.Predicate, Source: "api", Note: r.Note})
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

// valid checks a rule: a registered write tool or "*" (every write tool), allow or deny, an
// object predicate ({} when absent), and text Postgres can store.
func (s *Service) valid(r *NewRule) error {
	r.Tool, r.Effect = strings.TrimSpace(r.Tool), strings.TrimSpace(r.Effect)
	if len(r.Predicate) == 0 || string(r.Predicate) == "null" {
		r.Predicate = json.RawMessage(`{}`)
	}
	var pred map[string]any
	switch {
	case r.Tool == "":
		return steward.Errorf(steward.CodeInvalid, `tool is required: a tool name or "*"`)
	case r.Effect != "allow" && r.Effect != "deny":
		return steward.Errorf(steward.CodeInvalid, `effect must be "allow" or "deny"`)
	case json.Unmarshal(r.Predicate, &pred) != nil:
		return steward.Errorf(steward.CodeInvalid, "predicate must be a JSON object of argument values")
	case utf8.RuneCountInString(r.Note) > MaxNote:
		return steward.Errorf(steward.CodeInvalid, "note is longer than %d characters", MaxNote)
	}
	if s.Tools == nil {
		return errors.New("rules: no tool registry to check the rule against")
	}
	if err := s.Tools.CheckRuleTool(r.Tool); err != nil {
		return err
	}
	if err := steward.CheckText("note", r.Note); err != nil {
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
