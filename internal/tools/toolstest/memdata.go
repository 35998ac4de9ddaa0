package toolstest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
)

// MemData is an in-memory tools.Data for unit tests; the real one lives in the store and is tested
// against Postgres.
type MemData struct {
	mu            sync.Mutex
	now           time.Time
	Tasks         []steward.Task
	Facts         []steward.Fact
	keys          map[uuid.UUID]string
	Turns         map[uuid.UUID]*uuid.UUID // the turn that remembered each fact
	Notifications []steward.Notification
}

// NewMemData returns an empty MemData whose clock is fixed.
func NewMemData() *MemData {
	return &MemData{
		now:   time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC),
		keys:  map[uuid.UUID]string{},
		Turns: map[uuid.UUID]*uuid.UUID{},
	}
}

// CreateTask stores an open task.
func (m *MemData) CreateTask(_ context.Context, t steward.NewTask) (steward.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	task := steward.Task{ID: uuid.New(), Title: t.Title, Notes: t.Notes, Due: t.Due, Status: steward.TaskOpen, CreatedAt: m.now}
	m.Tasks = append(m.Tasks, task)
	return task, nil
}

// GetTask returns one task.
func (m *MemData) GetTask(_ context.Context, id uuid.UUID) (steward.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.Tasks {
		if t.ID == id {
			return t, nil
		}
	}
	return steward.Task{}, steward.ErrNotFound
}

// CompleteTask marks a task done.
func (m *MemData) CompleteTask(_ context.Context, id uuid.UUID) (steward.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.Tasks {
		if t.ID == id {
			if t.Status != steward.TaskDone {
				now := m.now
				t.Status, t.CompletedAt = steward.TaskDone, &now
				m.Tasks[i] = t
			}
			return t, nil
		}
	}
	return steward.Task{}, steward.ErrNotFound
}

// ListTasks lists tasks by status.
func (m *MemData) ListTasks(_ context.Context, status string) ([]steward.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []steward.Task
	for _, t := range m.Tasks {
		if status == "" || t.Status == status {
			out = append(out, t)
		}
	}
	return out, nil
}

// UpsertFact stores a fact unless its key exists.
func (m *MemData) UpsertFact(_ context.Context, f steward.NewFact) (steward.Fact, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, old := range m.Facts {
		if m.keys[old.ID] == f.Key {
			return old, false, nil
		}
	}
	fact := steward.Fact{ID: uuid.New(), Kind: f.Kind, Subject: f.Subject, Content: f.Content, CreatedAt: m.now, Untrusted: f.Untrusted}
	m.Facts = append(m.Facts, fact)
	m.keys[fact.ID] = f.Key
	m.Turns[fact.ID] = f.TurnID
	return fact, true, nil
}

// SearchFacts returns facts containing any word of query.
func (m *MemData) SearchFacts(_ context.Context, query string, limit int) ([]steward.Fact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []steward.Fact
	for _, f := range m.Facts {
		text := strings.ToLower(f.Subject + " " + f.Content)
		if slices.ContainsFunc(strings.Fields(strings.ToLower(query)), func(w string) bool { return strings.Contains(text, w) }) {
			out = append(out, f)
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ForgetFact deletes a fact.
func (m *MemData) ForgetFact(_ context.Context, id uuid.UUID) (steward.Fact, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, f := range m.Facts {
		if f.ID == id {
			m.Facts = slices.Delete(m.Facts, i, i+1)
			delete(m.keys, id)
			return f, nil
		}
	}
	return steward.Fact{}, steward.ErrNotFound
}

// CreateNotification stores a notification.
func (m *MemData) CreateNotification(_ context.Context, channel, title, message string) (steward.Notification, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := steward.Notification{ID: uuid.New(), Channel: channel, Title: title, Message: message, CreatedAt: m.now}
	m.Notifications = append(m.Notifications, n)
	return n, nil
}
