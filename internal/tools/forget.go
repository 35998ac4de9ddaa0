package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
)

// forgetArgs are the arguments of forget.
type forgetArgs struct {
	FactID string `json:"fact_id" jsonschema:"id (UUID) of the fact, as returned by remember or search_memory"`

	id uuid.UUID
}

// Check parses the fact id.
func (a *forgetArgs) Check() (err error) {
	a.id, err = parseID("fact_id", a.FactID)
	return err
}

// forgetTool returns the forget tool (write).
func forgetTool() Tool {
	t := New("forget",
		"Delete a remembered fact that is wrong or no longer wanted.",
		steward.KindWrite,
		func(ctx context.Context, env Env, a forgetArgs) (any, error) {
			d, err := env.data()
			if err != nil {
				return nil, err
			}
			f, err := d.ForgetFact(ctx, a.id)
			if errors.Is(err, steward.ErrNotFound) {
				return nil, &ArgError{Field: "fact_id", Msg: "no fact with id " + a.id.String() + "; use search_memory to find it", Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("forget fact %s: %w", a.id, err)
			}
			env.undoWith(steward.Inverse{Op: steward.UndoRestoreFact, ID: f.ID})
			return map[string]any{"fact": f, "forgotten": true}, nil
		})
	t.Reversible = true
	return Say(t, sayForget, saidForget)
}

func sayForget(forgetArgs) string { return "Forget a remembered fact" }

func saidForget(_ forgetArgs, o struct {
	Fact struct {
		Content string `json:"content"`
	} `json:"fact"`
}) string {
	return "Forgot " + Quote(o.Fact.Content)
}
