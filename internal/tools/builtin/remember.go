package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"

	"github.com/google/uuid"
)

// Limits of fact fields, in characters.
const (
	maxFactContent = 2000
	maxFactSubject = 200
)

// rememberArgs are the arguments of remember.
type rememberArgs struct {
	Content string `json:"content" jsonschema:"the fact to remember, as one self-contained sentence"`
	Kind    string `json:"kind,omitempty" enum:"fact,person,project,preference,decision" jsonschema:"what the fact is about; default fact"`
	Subject string `json:"subject,omitempty" jsonschema:"who or what the fact is about, e.g. a person's or project's name"`
}

// Check trims the text, checks the lengths and fills in the default kind.
func (a *rememberArgs) Check() error {
	a.Content = strings.TrimSpace(a.Content)
	a.Subject = strings.TrimSpace(a.Subject)
	if a.Kind == "" {
		a.Kind = steward.FactKindFact
	}
	if err := tools.CheckLength("content", a.Content, 1, maxFactContent); err != nil {
		return err
	}
	return tools.CheckLength("subject", a.Subject, 0, maxFactSubject)
}

// rememberTool returns the remember tool (write): stores a fact in structured memory,
// once per normalised content.
func rememberTool() tools.Tool {
	t := tools.New("remember",
		"Remember a durable fact about the owner, a person, a project, a preference or a decision, for future conversations. Remembering the same fact twice keeps one copy.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a rememberArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			// In a tainted turn the words may be an attacker's (docs/ARCHITECTURE.md §3).
			nf := steward.NewFact{Kind: a.Kind, Subject: a.Subject, Content: a.Content, Key: steward.FactKey(a.Kind, a.Subject, a.Content),
				Untrusted: env.Taint != ""}
			if env.TurnID != uuid.Nil {
				turn := env.TurnID
				nf.TurnID = &turn
			}
			f, created, err := d.UpsertFact(ctx, nf)
			if err != nil {
				return nil, fmt.Errorf("remember fact: %w", err)
			}
			if created {
				// A fact already remembered stays: only a new one is forgotten again.
				env.UndoWith(steward.Inverse{Op: steward.UndoForgetFact, ID: f.ID})
			}
			return map[string]any{"fact": f, "created": created}, nil
		})
	t.Reversible = true
	return tools.Say(t, sayRemember, saidRemember)
}

func sayRemember(a rememberArgs) string { return "Remember " + tools.Quote(a.Content) }

func saidRemember(_ rememberArgs, o struct {
	Created bool `json:"created"`
}) string {
	if !o.Created {
		return "Already remembered"
	}
	return "Remembered"
}
