package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/tools"
)

// Tasks implements the persistence the built-in tools need, inside the caller's transaction.
var _ tools.Data = Tasks{}

// toolsNotFound maps the store's ErrNotFound to the tools package's, keeping the detail.
func toolsNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: %w", steward.ErrNotFound, err)
	}
	return err
}

// CreateTask adds an open task.
func (t Tasks) CreateTask(ctx context.Context, in steward.NewTask) (steward.Task, error) {
	row, err := t.q.CreateTask(ctx, db.CreateTaskParams{
		OwnerID: t.ownerID, Title: in.Title, Notes: in.Notes, Due: in.Due,
	})
	if err != nil {
		return steward.Task{}, notFound("create task", err)
	}
	return toTask(row), nil
}

// GetTask reads one task.
func (t Tasks) GetTask(ctx context.Context, id uuid.UUID) (steward.Task, error) {
	row, err := t.q.GetTask(ctx, db.GetTaskParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return steward.Task{}, toolsNotFound(notFound("task "+id.String(), err))
	}
	return toTask(row), nil
}

// CompleteTask marks a task done (idempotently).
func (t Tasks) CompleteTask(ctx context.Context, id uuid.UUID) (steward.Task, error) {
	row, err := t.q.CompleteTask(ctx, db.CompleteTaskParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return steward.Task{}, toolsNotFound(notFound("complete task "+id.String(), err))
	}
	return toTask(row), nil
}

// ListTasks lists tasks by status ("" or "all" = every task).
func (t Tasks) ListTasks(ctx context.Context, status string) ([]steward.Task, error) {
	if status == "all" {
		status = ""
	}
	rows, err := t.q.ListTasks(ctx, db.ListTasksParams{OwnerID: t.ownerID, Status: status, MaxRows: 200})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out := make([]steward.Task, len(rows))
	for i, r := range rows {
		out[i] = toTask(r)
	}
	return out, nil
}

// DeleteTask removes a task.
func (t Tasks) DeleteTask(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteTask(ctx, db.DeleteTaskParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("delete task "+id.String(), n, err)
}

// ReopenTask opens a done task again (an undo of complete_task); ErrNotFound when there is
// no such done task.
func (t Tasks) ReopenTask(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.ReopenTask(ctx, db.ReopenTaskParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("reopen task "+id.String(), n, err)
}

// RestoreFact makes a forgotten fact current again (an undo of forget); ErrNotFound when
// there is no such forgotten fact, ErrConflict when the same fact was remembered since.
func (t Tasks) RestoreFact(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.RestoreFact(ctx, db.RestoreFactParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("restore fact "+id.String(), n, err)
}

func toTask(r db.Task) steward.Task {
	return steward.Task{ID: r.ID, Title: r.Title, Notes: r.Notes, Due: r.Due, Status: r.Status,
		CreatedAt: r.CreatedAt, CompletedAt: r.CompletedAt}
}

// UpsertFact stores a fact, deduplicated on its normalised key.
func (t Tasks) UpsertFact(ctx context.Context, f steward.NewFact) (steward.Fact, bool, error) {
	source, origin := "api", OriginOwner
	if f.TurnID != nil {
		source = "turn"
	}
	if f.Untrusted {
		origin = OriginTool
	}
	row, err := t.q.UpsertFact(ctx, db.UpsertFactParams{
		OwnerID: t.ownerID, Kind: f.Kind, Subject: f.Subject, Content: f.Content, Key: f.Key,
		Source: source, TurnID: nullUUID(f.TurnID), Origin: origin,
	})
	if err != nil {
		return steward.Fact{}, false, notFound("remember", err)
	}
	return steward.Fact{ID: row.ID, Kind: row.Kind, Subject: row.Subject, Content: row.Content, CreatedAt: row.CreatedAt,
		Untrusted: !Trusted(row.Origin)}, row.Created, nil
}

// SearchFacts finds current facts containing every word of query.
func (t Tasks) SearchFacts(ctx context.Context, query string, limit int) ([]steward.Fact, error) {
	rows, err := t.q.SearchFacts(ctx, db.SearchFactsParams{OwnerID: t.ownerID, Words: strings.Fields(query), MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("search facts: %w", err)
	}
	return toFacts(rows), nil
}

// ListFacts lists current facts, newest first.
func (t Tasks) ListFacts(ctx context.Context, limit int) ([]steward.Fact, error) {
	rows, err := t.q.ListFacts(ctx, db.ListFactsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list facts: %w", err)
	}
	return toFacts(rows), nil
}

// ForgetFact supersedes a fact: it leaves recall but stays for the audit trail.
func (t Tasks) ForgetFact(ctx context.Context, id uuid.UUID) (steward.Fact, error) {
	r, err := t.q.ForgetFact(ctx, db.ForgetFactParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return steward.Fact{}, toolsNotFound(notFound("forget fact "+id.String(), err))
	}
	return toFact(r), nil
}

func toFact(r db.MemoryFact) steward.Fact {
	return steward.Fact{ID: r.ID, Kind: r.Kind, Subject: r.Subject, Content: r.Content, CreatedAt: r.CreatedAt, Untrusted: !Trusted(r.Origin)}
}

func toFacts(rows []db.MemoryFact) []steward.Fact {
	out := make([]steward.Fact, len(rows))
	for i, r := range rows {
		out[i] = toFact(r)
	}
	return out
}

// Chunk is a piece of text remembered by meaning.
type Chunk struct {
	ID         uuid.UUID
	SourceKind string
	SourceID   string
	Text       string
	Distance   float64 // cosine distance to the query, in searches
}

// AddChunk stores a text with its embedding and its origin (an Origin* constant).
func (t Memory) AddChunk(ctx context.Context, sourceKind, sourceID, origin, text string, embedding []float32) (uuid.UUID, error) {
	row, err := t.q.InsertChunk(ctx, db.InsertChunkParams{OwnerID: t.ownerID, SourceKind: sourceKind,
		SourceID: sourceID, Origin: origin, Text: text, Embedding: pgvector.NewVector(embedding)})
	if err != nil {
		return uuid.Nil, notFound("add chunk", err)
	}
	return row.ID, nil
}

// CreateNotification records a notification for the owner, to the channel named channel
// ("" = the default channel); naming a channel the owner does not have is invalid.
func (t Tasks) CreateNotification(ctx context.Context, channel, title, message string) (steward.Notification, error) {
	if channel != "" {
		if _, err := t.q.GetChannelByName(ctx, db.GetChannelByNameParams{OwnerID: t.ownerID, Name: channel}); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return steward.Notification{}, steward.Errorf(steward.CodeInvalid, "there is no notification channel named %q", channel)
			}
			return steward.Notification{}, fmt.Errorf("notify: %w", err)
		}
	}
	r, err := t.q.CreateNotification(ctx, db.CreateNotificationParams{OwnerID: t.ownerID, Channel: channel, Title: title, Message: message})
	if err != nil {
		return steward.Notification{}, notFound("notify", err)
	}
	return steward.Notification{ID: r.ID, Channel: r.Channel, Title: r.Title, Message: r.Message, CreatedAt: r.CreatedAt}, nil
}

// ListNotifications lists the owner's notifications, newest first.
func (t Tasks) ListNotifications(ctx context.Context, limit int) ([]steward.Notification, error) {
	rows, err := t.q.ListNotifications(ctx, db.ListNotificationsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out := make([]steward.Notification, len(rows))
	for i, r := range rows {
		out[i] = steward.Notification{ID: r.ID, Channel: r.Channel, Title: r.Title, Message: r.Message, CreatedAt: r.CreatedAt}
	}
	return out, nil
}
