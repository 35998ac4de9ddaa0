package builtin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// listTasksArgs are the arguments of list_tasks.
type listTasksArgs struct {
	Status string `json:"status,omitempty" enum:"open,done,all" jsonschema:"which tasks: open (default), done or all"`
}

// Check fills in the default status.
func (a *listTasksArgs) Check() error {
	if a.Status == "" {
		a.Status = steward.TaskOpen
	}
	return nil
}

// listTasksTool returns the list_tasks tool (read).
func listTasksTool() tools.Tool {
	return tools.Say(tools.New("list_tasks",
		"List the owner's tasks: open ones by default, or done ones, or all.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a listTasksArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			status := a.Status
			if status == "all" {
				status = ""
			}
			tasks, err := d.ListTasks(ctx, status)
			if err != nil {
				return nil, fmt.Errorf("list tasks: %w", err)
			}
			if tasks == nil {
				tasks = []steward.Task{}
			}
			return map[string]any{"tasks": tasks}, nil
		}), sayListTasks, saidListTasks)
}

func sayListTasks(a listTasksArgs) string {
	switch a.Status {
	case "done":
		return "List done tasks"
	case "all":
		return "List all tasks"
	}
	return "List open tasks"
}

func saidListTasks(_ listTasksArgs, o struct {
	Tasks []json.RawMessage `json:"tasks"`
}) string {
	return "Found " + tools.Count(len(o.Tasks), "task")
}
