package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Service is the owner's notification channels, one service for every face
// (docs/ARCHITECTURE.md §7): list, add (checked, secrets sealed), remove, test.
type Service struct {
	Store  *store.Store
	Sealer *secret.Sealer
	Sender *Sender
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// Open turns a stored channel into a send target, opening its secret.
func (s *Service) Open(ownerID uuid.UUID, c store.Channel) (Target, error) {
	return OpenTarget(s.Sealer, ownerID, c)
}

// OpenTarget turns a stored channel into a send target, opening its secret with sealer.
func OpenTarget(sealer *secret.Sealer, ownerID uuid.UUID, c store.Channel) (Target, error) {
	t := Target{Name: c.Name, Kind: c.Kind, URL: c.URL, Topic: c.Topic}
	if len(c.Settings) > 0 {
		if err := json.Unmarshal(c.Settings, &t.Settings); err != nil {
			return Target{}, fmt.Errorf("channel %s settings: %w", c.Name, err)
		}
	}
	if len(c.Secret) > 0 {
		plain, err := sealer.Open(c.Secret, ownerID[:])
		if err != nil {
			return Target{}, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		if err := json.Unmarshal(plain, &t.Secrets); err != nil {
			return Target{}, fmt.Errorf("channel %s secret: %w", c.Name, err)
		}
	}
	return t, nil
}

// ViewOf is what a client sees of a channel: never a secret.
func ViewOf(c store.Channel) View {
	v := View{Name: c.Name, Kind: c.Kind, Default: c.Default, URL: c.URL, Topic: c.Topic,
		HasSecret: len(c.Secret) > 0, CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339)}
	if c.GoneAt != nil {
		v.GoneAt = c.GoneAt.UTC().Format(time.RFC3339)
	}
	if len(c.Settings) > 0 {
		_ = json.Unmarshal(c.Settings, &v.Settings)
	}
	return v
}

// stored reads the owner's channels as stored (their secrets sealed), by name.
func (s *Service) stored(ctx context.Context, ownerID uuid.UUID) ([]store.Channel, error) {
	var chs []store.Channel
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		chs, err = tx.Channels.List(ctx)
		return err
	})
	return chs, err
}

// List returns the owner's channels by name.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]View, error) {
	chs, err := s.stored(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(chs))
	for i, c := range chs {
		out[i] = ViewOf(c)
	}
	return out, nil
}

// Add checks in — its shape, then its destination against the SSRF guard (a private or
// unresolvable host is refused) — seals its secrets and stores it in one statement: a
// refused channel leaves nothing behind. A second channel of the same name is a conflict.
func (s *Service) Add(ctx context.Context, ownerID uuid.UUID, in Input) (View, error) {
	t, err := in.check()
	if err != nil {
		return View{}, err
	}
	if t.Kind == WebPush {
		if err := s.newSubscription(ctx, ownerID, t); err != nil {
			return View{}, err
		}
	}
	if err := s.Sender.Check(ctx, t); err != nil {
		return View{}, invalid("the channel's destination is refused: %s", t.redact(strings.TrimPrefix(err.Error(), egress.ErrBlocked.Error()+": ")))
	}
	var sealed []byte
	if !t.Secrets.empty() {
		plain, _ := json.Marshal(t.Secrets)
		if sealed, err = s.Sealer.Seal(plain, ownerID[:]); errors.Is(err, secret.ErrNoKey) {
			return View{}, steward.Errorf(steward.CodeInvalid, "this deployment has no STEWARD_SECRET_KEY, so a channel with a token, password or secret URL cannot be stored; ask the operator to set it")
		} else if err != nil {
			return View{}, err
		}
	}
	var c store.Channel
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		c, err = tx.Channels.Create(ctx, store.NewChannel{Name: t.Name, Kind: t.Kind, URL: t.URL, Topic: t.Topic,
			Settings: t.Settings.json(), Secret: sealed, MakeDefault: in.Default})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return View{}, steward.Errorf(steward.CodeConflict, "a channel named %q already exists", t.Name)
	}
	if err != nil {
		return View{}, err
	}
	return ViewOf(c), nil
}

// PushKey is the VAPID public key browsers subscribe with, or ErrPushOff in words.
func (s *Service) PushKey() (string, error) {
	if s == nil || s.Sender == nil || s.Sender.VAPID == nil {
		return "", ErrPushOff
	}
	if s.Sealer == nil || !s.Sealer.HasKey() {
		return "", steward.Errorf(steward.CodeInvalid, "Web Push needs STEWARD_SECRET_KEY on this server (a subscription's keys are stored sealed); ask the operator to set it")
	}
	return s.Sender.VAPID.PublicKey, nil
}

// newSubscription refuses a webpush channel this deployment cannot send, or whose browser
// already notifies the owner under another name (the endpoint is sealed, so each webpush
// channel's is opened and compared).
func (s *Service) newSubscription(ctx context.Context, ownerID uuid.UUID, t Target) error {
	if _, err := s.PushKey(); err != nil {
		return err
	}
	chs, err := s.stored(ctx, ownerID)
	if err != nil {
		return err
	}
	for _, c := range chs {
		if c.Kind != WebPush || c.GoneAt != nil {
			continue
		}
		if old, err := s.Open(ownerID, c); err == nil && old.Secrets.URL == t.Secrets.URL {
			return steward.Errorf(steward.CodeConflict, "this browser already notifies you as the channel %q", c.Name)
		}
	}
	return nil
}

// Remove deletes a channel by name; when it was the default, the oldest other channel
// becomes the default. Notifications naming it fail with a clear error (nothing else lost).
func (s *Service) Remove(ctx context.Context, ownerID uuid.UUID, name string) error {
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		return tx.Channels.Delete(ctx, name)
	})
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "there is no channel named %q", name)
	}
	return err
}

// MakeDefault makes the named channel the owner's default (notifications that name no
// channel go to it) and clears the old default in the same transaction. An unknown name is
// not found and changes nothing.
func (s *Service) MakeDefault(ctx context.Context, ownerID uuid.UUID, name string) (View, error) {
	var c store.Channel
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		c, err = tx.Channels.MakeDefault(ctx, name)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return View{}, steward.Errorf(steward.CodeNotFound, "there is no channel named %q", name)
	}
	if err != nil {
		return View{}, err
	}
	return ViewOf(c), nil
}

// TestResult is the outcome of a test message.
type TestResult struct {
	Channel   string `json:"channel"`
	Delivered bool   `json:"delivered"`
	Error     string `json:"error,omitempty"`
}

// Test sends a test message to the named channel now, outside any transaction, and
// records the attempt in the activity feed.
func (s *Service) Test(ctx context.Context, ownerID uuid.UUID, name string) (TestResult, error) {
	var c store.Channel
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		c, err = tx.Channels.Named(ctx, name)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return TestResult{}, steward.Errorf(steward.CodeNotFound, "there is no channel named %q", name)
	}
	if err != nil {
		return TestResult{}, err
	}
	t, err := s.Open(ownerID, c)
	if err != nil {
		return TestResult{}, steward.Errorf(steward.CodeInvalid, "the channel %q cannot be used: %v", name, err)
	}
	now := s.Now.Now
	m := Message{ID: uuid.New(), Title: "Steward test", Text: "This is a test message from Steward: the channel " + name + " works.", CreatedAt: now()}
	_, sendErr := s.Sender.Send(ctx, t, m)
	res := TestResult{Channel: name, Delivered: sendErr == nil}
	if sendErr != nil {
		res.Error = t.redact(sendErr.Error())
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if errors.Is(sendErr, ErrGone) {
			if err := tx.Channels.MarkGone(ctx, name, now()); err != nil {
				return err
			}
		}
		return tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{AttemptEvent(m.ID, name, 1, res.Delivered, res.Error, nil, true)})
	})
	return res, err
}

// AttemptEvent is the audit row of one delivery attempt, shown in the activity feed.
func AttemptEvent(id uuid.UUID, channel string, attempt int, delivered bool, errText string, next *time.Time, test bool) steward.NewEvent {
	data, _ := json.Marshal(map[string]any{"notification_id": id, "channel": channel, "attempt": attempt,
		"delivered": delivered, "error": errText, "next_attempt_at": next, "test": test})
	kind := "notification.delivered"
	switch {
	case delivered:
	case next != nil:
		kind = "notification.retry"
	default:
		kind = "notification.failed"
	}
	return steward.NewEvent{Kind: kind, Data: data}
}
