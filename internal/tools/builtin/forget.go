package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"

	"github.com/google/uuid"
)

// forgetArgs are the arguments of forget.
type forgetArgs struct {
	FactID string `json:"fact_id" jsonschema:"id (UUID) of the fact, as returned by remember or search_memory"`

	id uuid.UUID
}

// Check parses the fact id.
func (a *forgetArgs) Check() (err error) {
	a.id, err = tools.ParseID("fact_id", a.FactID)
	return err
}

// forgetTool returns the forget tool (write).
func forgetTool() tools.Tool {
	t := tools.New("forget",
		"Delete a remembered fact that is wrong or no longer wanted.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a forgetArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			f, err := d.ForgetFact(ctx, a.id)
			if errors.Is(err, steward.ErrNotFound) {
				return nil, &tools.ArgError{Field: "fact_id", Msg: "no fact with id " + a.id.String() + "; use search_memory to find it", Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("forget fact %s: %w", a.id, err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoRestoreFact, ID: f.ID})
			return map[string]any{"fact": f, "forgotten": true}, nil
		})
	t.Reversible = true
	return tools.Say(t, sayForget, saidForget)
}

func sayForget(forgetArgs) string { return "Forget a remembered fact" }

func saidForget(_ forgetArgs, o struct {
	Fact struct {
		Content string `json:"content"`
	} `json:"fact"`
}) string {
	return "Forgot " + tools.Quote(o.Fact.Content)
}
