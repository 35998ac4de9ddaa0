package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"

	"github.com/google/uuid"
)

// completeTaskArgs are the arguments of complete_task.
type completeTaskArgs struct {
	TaskID string `json:"task_id" jsonschema:"id (UUID) of the task, as returned by create_task or list_tasks"`

	id uuid.UUID
}

// Check parses the task id.
func (a *completeTaskArgs) Check() (err error) {
	a.id, err = tools.ParseID("task_id", a.TaskID)
	return err
}

// completeTaskTool returns the complete_task tool (write).
func completeTaskTool() tools.Tool {
	t := tools.New("complete_task",
		"Mark a task as done.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a completeTaskArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			before, err := d.GetTask(ctx, a.id)
			if errors.Is(err, steward.ErrNotFound) {
				return nil, &tools.ArgError{Field: "task_id", Msg: "no task with id " + a.id.String() + "; use list_tasks to find it", Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("complete task %s: %w", a.id, err)
			}
			t, err := d.CompleteTask(ctx, a.id)
			if err != nil {
				return nil, fmt.Errorf("complete task %s: %w", a.id, err)
			}
			if before.Status != steward.TaskDone {
				// A task that was already done is left as it was: there is nothing to undo.
				env.UndoWith(steward.Inverse{Op: steward.UndoReopenTask, ID: t.ID})
			}
			return map[string]any{"task": t}, nil
		})
	t.Reversible = true
	return tools.Say(t, sayCompleteTask, saidCompleteTask)
}

func sayCompleteTask(completeTaskArgs) string { return "Mark a task done" }

func saidCompleteTask(_ completeTaskArgs, o struct {
	Task struct {
		Title string `json:"title"`
	} `json:"task"`
}) string {
	return "Completed task " + tools.Quote(o.Task.Title)
}
