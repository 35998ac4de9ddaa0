package builtin

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Limits of task fields, in characters.
const (
	maxTaskTitle = 200
	maxTaskNotes = 2000
)

// createTaskArgs are the arguments of create_task.
type createTaskArgs struct {
	Title string `json:"title" jsonschema:"short title of the task, at most 200 characters"`
	Due   string `json:"due,omitempty" jsonschema:"due date as YYYY-MM-DD or date and time as RFC 3339 (2025-03-01T09:00:00+01:00)"`
	Notes string `json:"notes,omitempty" jsonschema:"longer details, at most 2000 characters"`

	due *time.Time
}

// Check trims the text, checks the lengths and parses the due date.
func (a *createTaskArgs) Check() error {
	a.Title = strings.TrimSpace(a.Title)
	a.Notes = strings.TrimSpace(a.Notes)
	if err := tools.CheckLength("title", a.Title, 1, maxTaskTitle); err != nil {
		return err
	}
	if err := tools.CheckLength("notes", a.Notes, 0, maxTaskNotes); err != nil {
		return err
	}
	due, err := parseDue(a.Due)
	a.due = due
	return err
}

// parseDue parses a due date: empty, RFC 3339, or YYYY-MM-DD (midnight UTC).
func parseDue(s string) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return &t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return &t, nil
	}
	return nil, tools.ArgErrorf("due", "%s is not a date; use YYYY-MM-DD or RFC 3339 such as 2025-03-01T09:00:00Z", tools.QuoteValue(s))
}

// createTaskTool returns the create_task tool (write).
func createTaskTool() tools.Tool {
	t := tools.New("create_task",
		"Create a task on the owner's task list, optionally with a due date and notes.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a createTaskArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			t, err := d.CreateTask(ctx, steward.NewTask{Title: a.Title, Notes: a.Notes, Due: a.due})
			if err != nil {
				return nil, fmt.Errorf("create task: %w", err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoDeleteTask, ID: t.ID})
			return map[string]any{"task": t}, nil
		})
	t.Reversible = true
	return tools.Say(t, sayCreateTask, saidCreateTask)
}

func sayCreateTask(a createTaskArgs) string {
	s := "Create task " + tools.Quote(a.Title)
	if strings.TrimSpace(a.Due) != "" {
		s += ", due " + tools.Day(a.Due)
	}
	return s
}

func saidCreateTask(a createTaskArgs, o struct {
	Task struct {
		Title string `json:"title"`
	} `json:"task"`
}) string {
	return "Created task " + tools.Quote(cmp.Or(o.Task.Title, a.Title))
}
