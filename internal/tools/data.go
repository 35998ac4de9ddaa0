package tools

import (
	"context"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
)

// Data is the owner-scoped persistence the built-in tools need. The store implements it
// inside the caller's transaction (with the owner already set), so a write tool's effect
// commits together with its journal row.
type Data interface {
	// CreateTask stores a new open task.
	CreateTask(ctx context.Context, t steward.NewTask) (steward.Task, error)
	// GetTask returns one task; ErrNotFound when it does not exist.
	GetTask(ctx context.Context, id uuid.UUID) (steward.Task, error)
	// CompleteTask marks a task done; ErrNotFound when it does not exist.
	CompleteTask(ctx context.Context, id uuid.UUID) (steward.Task, error)
	// ListTasks lists tasks with the status ("" = all, TaskOpen, TaskDone).
	ListTasks(ctx context.Context, status string) ([]steward.Task, error)
	// UpsertFact stores a fact unless one with the same Key exists; created says which.
	UpsertFact(ctx context.Context, f steward.NewFact) (fact steward.Fact, created bool, err error)
	// SearchFacts returns at most limit facts matching the keywords of query.
	SearchFacts(ctx context.Context, query string, limit int) ([]steward.Fact, error)
	// ForgetFact deletes a fact and returns it; ErrNotFound when it does not exist.
	ForgetFact(ctx context.Context, id uuid.UUID) (steward.Fact, error)
	// CreateNotification stores a notification for the owner.
	CreateNotification(ctx context.Context, channel, title, message string) (steward.Notification, error)
}
