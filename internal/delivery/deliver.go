// Package delivery sends an owner's notifications to the channel they configured — an HTTPS
// webhook taking JSON (ntfy, Slack incoming webhooks, anything else) — idempotently and with
// retries, through the egress package's SSRF guard: Steward never lets an owner-supplied URL
// reach its own network, loopback, link-local or cloud metadata addresses.
package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/store"
)

// Deliverer sends stored notifications to their owner's webhook channel. Delivery is
// at-least-once and idempotent on the notification id: each notification is leased before
// it is sent (a concurrent flush skips it), carries its id in an Idempotency-Key header, and
// is marked delivered on a 2xx answer. Failures are retried with exponential backoff across
// flushes until MaxAttempts; a 4xx answer other than 408 and 429 is final.
type Deliverer struct {
	Store *store.Store
	// Guard is the SSRF guard every channel URL and connection passes (https only).
	Guard *egress.Guard
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
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	clientOnce sync.Once
	client     *http.Client
}

// batch is the most notifications one flush sends per owner; lease is how long a sent
// notification is held before another flush may retry it.
const (
	batch = 20
	lease = 2 * time.Minute
)

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deliverer) httpClient() *http.Client {
	d.clientOnce.Do(func() {
		timeout := d.Timeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		d.client = d.Guard.Client()
		d.client.Timeout = timeout
	})
	return d.client
}

// Payload is the JSON body of a delivery: "text" for Slack incoming webhooks; "topic",
// "title" and "message" for ntfy's JSON publishing (channel URL = the ntfy server's root, with
// the topic set on the channel); the rest for anything else.
type Payload struct {
	Text           string    `json:"text"`
	Topic          string    `json:"topic,omitempty"`
	Title          string    `json:"title,omitempty"`
	Message        string    `json:"message"`
	NotificationID uuid.UUID `json:"notification_id"`
	CreatedAt      time.Time `json:"created_at"`
}

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
		ch, err = tx.Deliveries.SetChannel(ctx, rawURL, topic)
		return err
	})
	return ch, err
}

// Flush delivers the owner's due notifications to their channel; without a channel it does
// nothing. It returns an error only when the database fails: failed sends are recorded and
// retried by later flushes.
func (d *Deliverer) Flush(ctx context.Context, ownerID uuid.UUID) error {
	var ch store.Channel
	var due []store.Notification
	now := d.now()
	err := d.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if ch, err = tx.Deliveries.Channel(ctx); err != nil {
			return err
		}
		if !ch.Enabled {
			return nil
		}
		due, err = tx.Deliveries.Claim(ctx, now, lease, ch.CreatedAt, batch)
		return err
	})
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim deliveries: %w", err)
	}
	var errs []error
	for _, n := range due {
		if err := d.deliver(ctx, ownerID, ch, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deliver sends one leased notification and records the outcome.
func (d *Deliverer) deliver(ctx context.Context, ownerID uuid.UUID, ch store.Channel, n store.Notification) error {
	log := zerolog.Ctx(ctx).With().Stringer("owner_id", ownerID).Stringer("notification_id", n.ID).Logger()
	final, sendErr := d.send(ctx, ch, n)
	return d.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if sendErr == nil {
			log.Info().Int("attempt", n.DeliveryAttempts).Msg("notification delivered")
			return tx.Deliveries.MarkDelivered(ctx, n.ID, d.now())
		}
		var next *time.Time
		if !final && n.DeliveryAttempts < d.maxAttempts() {
			t := d.now().Add(d.backoff(n.DeliveryAttempts))
			next = &t
		}
		log.Warn().Err(sendErr).Int("attempt", n.DeliveryAttempts).Bool("retry", next != nil).Msg("notification delivery failed")
		return tx.Deliveries.MarkFailed(ctx, n.ID, next, truncate(sendErr.Error(), 500))
	})
}

// send posts a notification; final reports an answer retrying cannot change.
func (d *Deliverer) send(ctx context.Context, ch store.Channel, n store.Notification) (final bool, err error) {
	u, err := d.Guard.CheckURL(ch.URL)
	if err != nil {
		return true, err
	}
	text := n.Message
	if n.Title != "" {
		text = n.Title + "\n" + n.Message
	}
	body, err := json.Marshal(Payload{Text: text, Topic: ch.Topic, Title: n.Title, Message: n.Message,
		NotificationID: n.ID, CreatedAt: n.CreatedAt})
	if err != nil {
		return true, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return true, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", n.ID.String())
	req.Header.Set("User-Agent", "Steward-Notify/1")
	resp, err := d.httpClient().Do(req)
	if err != nil {
		return errors.Is(err, egress.ErrBlocked), redactURL(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return false, nil
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return true, fmt.Errorf("the channel answered %d", c)
	default:
		return false, fmt.Errorf("the channel answered %d", c)
	}
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

// redactURL drops the URL from a client error: channel URLs carry secrets (Slack's do).
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
