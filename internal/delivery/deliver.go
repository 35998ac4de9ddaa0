// Package delivery sends an owner's notifications to the channels they configured
// (internal/channel: ntfy, Telegram, Slack, email, HTTPS webhook, Web Push) idempotently and with
// retries, through the egress package's SSRF guard: Steward never lets an owner-supplied URL
// reach its own network, loopback, link-local or cloud metadata addresses.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/work"
)

// Deliverer sends stored notifications to their owner's channels (internal/channel): the
// channel a notification names, else the owner's default. Delivery is at-least-once and
// idempotent on the notification id: each notification is leased before it is sent (a
// concurrent flush skips it) and carries its id (the webhook's Idempotency-Key, the email's
// Message-ID), and is marked delivered on success. Failures are retried with exponential
// backoff across flushes until MaxAttempts; an answer retrying cannot change is final. Each
// attempt is an audit event (notification.delivered, .retry, .failed) in the activity feed.
type Deliverer struct {
	Store *store.Store
	// Guard is the SSRF guard every channel URL and connection passes (https only).
	Guard *egress.Guard
	// Expand turns a stored notification's text into the text sent (the approval links'
	// placeholders into links, internal/links); nil sends it as stored.
	Expand func(string) string
	// Buttons are the Telegram inline buttons of a stored notification's text (the approval
	// links' Approve and Deny, internal/links); nil sends none.
	Buttons func(string) []channel.Button
	// Actions turn a stored notification's text into a Web Push notification's body and its
	// Approve and Deny actions (the approval links, internal/links); nil sends the text as
	// Expand makes it, without actions.
	Actions func(string) (string, []channel.Action)
	// Sealer opens channels' secrets; nil opens none (a channel with a secret then fails).
	Sealer *secret.Sealer
	// Sender sends to channels; nil means one over Guard's options.
	Sender *channel.Sender
	// Channels lists owners with a channel (*store.Door); needed by Drain only.
	Channels interface {
		ScanChannelOwners(ctx context.Context) ([]uuid.UUID, error)
	}
	// MaxAttempts is the number of attempts per notification; zero means 8.
	MaxAttempts int
	// Backoff is the wait after the n-th failed attempt (n from 1); nil means 30s·2^(n-1),
	// at most one hour.
	Backoff func(n int) time.Duration
	// Timeout bounds one attempt; zero means 10 seconds.
	Timeout time.Duration
	// Now is the clock (nil: the system clock).
	Now steward.Clock

	senderOnce sync.Once
}

// batch is the most notifications one flush sends per owner; lease is how long a sent
// notification is held before another flush may retry it.
const (
	batch = 20
	lease = 2 * time.Minute
)

func (d *Deliverer) sender() *channel.Sender {
	d.senderOnce.Do(func() {
		if d.Sender == nil {
			timeout := d.Timeout
			if timeout <= 0 {
				timeout = 10 * time.Second
			}
			d.Sender = &channel.Sender{Options: d.Guard.Options(), Timeout: timeout}
		}
	})
	return d.Sender
}

// Payload is the JSON body of a webhook channel's delivery (channel.Payload).
type Payload = channel.Payload

// SetChannel validates a channel URL with the guard and stores it as the owner's channel.
// Only notifications created from now on are delivered to it.
func (d *Deliverer) SetChannel(ctx context.Context, ownerID uuid.UUID, rawURL, topic string) (store.Channel, error) {
	if len(rawURL) > 2000 {
		return store.Channel{}, steward.Errorf(steward.CodeInvalid, "the channel URL is longer than 2000 characters")
	}
	if _, err := d.Guard.CheckURL(rawURL); err != nil {
		return store.Channel{}, steward.Errorf(steward.CodeInvalid, "the channel URL is refused: %s", strings.TrimPrefix(err.Error(), egress.ErrBlocked.Error()+": "))
	}
	if len(topic) > 64 {
		return store.Channel{}, steward.Errorf(steward.CodeInvalid, "the topic is longer than 64 characters")
	}
	var ch store.Channel
	err := d.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		ch, err = tx.Channels.SetWebhook(ctx, rawURL, topic)
		return err
	})
	return ch, err
}

// Flush delivers the owner's due notifications to their channels; without a channel it does
// nothing. It returns an error only when the database fails: failed sends are recorded and
// retried by later flushes.
func (d *Deliverer) Flush(ctx context.Context, ownerID uuid.UUID) error {
	var chs []store.Channel
	var due []store.Notification
	now := d.Now.Now()
	err := d.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		all, err := tx.Channels.List(ctx)
		if err != nil {
			return err
		}
		var since time.Time
		for _, c := range all {
			if c.Enabled {
				chs = append(chs, c)
				if since.IsZero() || c.CreatedAt.Before(since) {
					since = c.CreatedAt
				}
			}
		}
		if len(chs) == 0 {
			return nil
		}
		// Only notifications made since the first channel was set up are delivered.
		due, err = tx.Deliveries.Claim(ctx, now, lease, since, batch)
		return err
	})
	if err != nil {
		return fmt.Errorf("claim deliveries: %w", err)
	}
	var errs []error
	for _, n := range due {
		if err := d.deliver(ctx, ownerID, chs, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// target picks a notification's channel: the one it names, else the default.
func target(chs []store.Channel, n store.Notification) (store.Channel, error) {
	for _, c := range chs {
		if (n.Channel == "" && c.Default) || (n.Channel != "" && c.Name == n.Channel) {
			return c, nil
		}
	}
	if n.Channel == "" {
		return store.Channel{}, errors.New("the owner has no default notification channel")
	}
	return store.Channel{}, fmt.Errorf("there is no notification channel named %q", n.Channel)
}

// deliver sends one leased notification and records the outcome and the attempt.
func (d *Deliverer) deliver(ctx context.Context, ownerID uuid.UUID, chs []store.Channel, n store.Notification) error {
	log := zerolog.Ctx(ctx).With().Stringer("owner_id", ownerID).Stringer("notification_id", n.ID).Logger()
	ch, sendErr := target(chs, n)
	final := sendErr != nil
	if sendErr == nil {
		final, sendErr = d.send(ctx, ownerID, ch, n)
	}
	return d.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if sendErr == nil {
			log.Info().Int("attempt", n.DeliveryAttempts).Str("channel", ch.Name).Msg("notification delivered")
			if err := tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{channel.AttemptEvent(n.ID, ch.Name, n.DeliveryAttempts, true, "", nil, false)}); err != nil {
				return err
			}
			return tx.Deliveries.MarkDelivered(ctx, n.ID, d.Now.Now())
		}
		var next *time.Time
		if !final && n.DeliveryAttempts < d.maxAttempts() {
			t := d.Now.Now().Add(d.backoff(n.DeliveryAttempts))
			next = &t
		}
		if errors.Is(sendErr, channel.ErrGone) {
			if err := tx.Channels.MarkGone(ctx, ch.Name, d.Now.Now()); err != nil {
				return err
			}
		}
		reason := truncate(sendErr.Error(), 500)
		log.Warn().Str("error", reason).Int("attempt", n.DeliveryAttempts).Str("channel", ch.Name).Bool("retry", next != nil).Msg("notification delivery failed")
		if err := tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{channel.AttemptEvent(n.ID, ch.Name, n.DeliveryAttempts, false, reason, next, false)}); err != nil {
			return err
		}
		return tx.Deliveries.MarkFailed(ctx, n.ID, next, reason)
	})
}

// send sends a notification to ch; final reports an answer retrying cannot change.
func (d *Deliverer) send(ctx context.Context, ownerID uuid.UUID, ch store.Channel, n store.Notification) (final bool, err error) {
	t, err := channel.OpenTarget(d.Sealer, ownerID, ch)
	if err != nil {
		// A key missing or changed: retried, so an operator who sets the key loses nothing.
		return false, err
	}
	text := n.Message
	var actions []channel.Action
	switch {
	case t.Kind == channel.WebPush && d.Actions != nil:
		text, actions = d.Actions(text)
	case d.Expand != nil:
		text = d.Expand(text)
	}
	m := channel.Message{ID: n.ID, Title: n.Title, Text: text, CreatedAt: n.CreatedAt, Actions: actions}
	if t.Kind == channel.Telegram && d.Buttons != nil {
		m.Buttons = d.Buttons(n.Message)
	}
	return d.sender().Send(ctx, t, m)
}

func (d *Deliverer) maxAttempts() int {
	if d.MaxAttempts > 0 {
		return d.MaxAttempts
	}
	return 8
}

func (d *Deliverer) backoff(n int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(n)
	}
	wait := 30 * time.Second
	for i := 1; i < n && wait < time.Hour; i++ {
		wait *= 2
	}
	return min(wait, time.Hour)
}

// Drain flushes every owner with a channel (the scheduler's tick does it, so notifications
// approved in chat or missed by a crashed run still go out).
func (d *Deliverer) Drain(ctx context.Context) error {
	owners, err := d.Channels.ScanChannelOwners(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range owners {
		if err := d.Flush(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// FlushKind is the work spine's kind (internal/work) that delivers an owner's due
// notifications now — a suspended turn's approval request — rather than at the scheduler's
// next tick. It keeps no row: the notifications table is its queue, each notification leased
// before it is sent, and Drain is its own drain; the key names what asked (a turn's id).
const FlushKind = "notify_flush"

// flushTimeout bounds one owner's flush handed by the spine.
const flushTimeout = 10 * time.Second

// Kind is FlushKind on the work spine: its worker is Flush, within flushTimeout; a failure
// is left to the tick's Drain.
func (d *Deliverer) Kind() work.Kind {
	return work.Kind{Name: FlushKind, Rowless: true, Work: func(ctx context.Context, ownerID uuid.UUID, _ string) error {
		ctx, cancel := context.WithTimeout(ctx, flushTimeout)
		defer cancel()
		return d.Flush(ctx, ownerID)
	}}
}
