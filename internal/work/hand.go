package work

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/trace"
)

// Message is the body of a run queue message (STEWARD_RUN_QUEUE_URL): one item of one kind.
type Message struct {
	OwnerID uuid.UUID `json:"owner_id"`
	Kind    string    `json:"kind"`
	Key     string    `json:"key"`
}

// sendTimeout bounds sending an item to the run queue, retries included, within a webhook
// function's 30 s.
const sendTimeout = 5 * time.Second

// Hand makes the one choice of where an item enqueued (and committed) runs now: in this
// process, under Run, when `steward serve` runs it (after the caller's response); else on
// the run queue for functions/worker, when there is one; else, for an Inline or Rowless
// kind, before Hand returns (a Lambda function is frozen once it answered); else it waits
// for the drain (after its kind's Grace). A send that fails falls to the same last choice.
// Hand never fails: the item's row stays queued for the drain whatever happens here.
func (s *Spine) Hand(ctx context.Context, kind string, ownerID uuid.UUID, key string) {
	log := zerolog.Ctx(ctx).With().Str("kind", kind).Str("key", key).Logger()
	k, err := s.kind(kind)
	if err != nil {
		log.Error().Str("error", err.Error()).Msg("work: handed an unknown kind")
		return
	}
	if s.inProcess(k.Name, ownerID, key) {
		return
	}
	if s.Queue != nil && !k.Rowless {
		err := s.send(ctx, Message{OwnerID: ownerID, Kind: k.Name, Key: key})
		if err == nil {
			log.Info().Msg("work item sent to the run queue")
			return
		}
		log.Warn().Str("error", trace.Redact(err.Error())).Bool("inline", k.Inline).Msg("run queue send failed")
	}
	if !k.Inline && !k.Rowless {
		return // the drain takes it after its grace
	}
	if err := s.Do(context.WithoutCancel(ctx), k.Name, ownerID, key); err != nil {
		log.Warn().Str("error", trace.Redact(err.Error())).Msg("work item failed; the drain retries")
	}
}

// send puts one message on the run queue.
func (s *Spine) send(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	return s.Queue.Send(ctx, string(body))
}

// inProcess runs the item under Run, if it runs, and reports whether it does.
func (s *Spine) inProcess(kind string, ownerID uuid.UUID, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runCtx == nil {
		return false
	}
	ctx := s.runCtx
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		if err := s.Do(ctx, kind, ownerID, key); err != nil && ctx.Err() == nil {
			zerolog.Ctx(ctx).Warn().Str("kind", kind).Str("key", key).Str("error", trace.Redact(err.Error())).
				Msg("work item failed; the drain retries")
		}
	}()
	return true
}

// Run is the in-process side of a long-lived server (`steward serve`): while it runs, Hand
// runs items in this process. It first takes every item due now that the last process left
// (a turn a shutdown saved continuing goes on at once). When ctx ends it stops taking items
// and returns once every one it ran has returned, so the pools can be closed after it.
func (s *Spine) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.runCtx != nil {
		s.mu.Unlock()
		return errors.New("work: Run is already running")
	}
	if zerolog.Ctx(ctx).GetLevel() == zerolog.Disabled {
		ctx = s.Logger.WithContext(ctx) // the items it runs log to the process's log
	}
	s.runCtx = ctx
	s.running.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.running.Done()
		if err := s.drain(ctx, true); err != nil && ctx.Err() == nil {
			zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Msg("work: taking what the last process left failed; the drain retries")
		}
	}()
	<-ctx.Done()
	s.mu.Lock()
	s.runCtx = nil // no item joins once Wait may have begun
	s.mu.Unlock()
	s.running.Wait()
	return nil
}

// HandleMessages is the body of functions/worker: each record of an SQS batch from the run
// queue is a Message, Do'ne once (an item another worker or the drain already took is done,
// not a failure). A record that is not a Message of a registered kind, or whose worker
// failed, is reported in BatchItemFailures (ReportBatchItemFailures), so only it returns to
// the queue — retried, then dead-lettered — and the rest of the batch is not redelivered.
func (s *Spine) HandleMessages(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		log := zerolog.Ctx(ctx).With().Str("message_id", rec.MessageId).Logger()
		m, err := s.decode(rec.Body)
		if err != nil {
			log.Error().Int("bytes", len(rec.Body)).Str("error", err.Error()).Msg("run queue message is not {owner_id, kind, key}")
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		log = log.With().Str("kind", m.Kind).Str("key", m.Key).Stringer("owner_id", m.OwnerID).Logger()
		if err := s.Do(log.WithContext(ctx), m.Kind, m.OwnerID, m.Key); err != nil {
			log.Error().Str("error", trace.Redact(err.Error())).Msg("work item failed")
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		log.Info().Msg("work item processed")
	}
	return resp, nil
}

// decode reads one record's body: a Message naming a registered kind.
func (s *Spine) decode(body string) (Message, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Message{}, err
	}
	if dec.More() {
		return Message{}, errors.New("more than one value")
	}
	if m.OwnerID == uuid.Nil || m.Key == "" {
		return Message{}, errors.New("no owner_id or key")
	}
	if _, err := s.kind(m.Kind); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Key is an int64 item key as its text, for the kinds keyed by a number.
func Key(n int64) string { return strconv.FormatInt(n, 10) }

// Handing is Hand of kind for the items keyed by an id, in the shape of a hook that names
// an owner and an id (agent.Hooks.AfterSuspend, httpapi.Deps.ProcessWebhook).
func (s *Spine) Handing(kind string) func(ctx context.Context, ownerID, id uuid.UUID) {
	return func(ctx context.Context, ownerID, id uuid.UUID) { s.Hand(ctx, kind, ownerID, id.String()) }
}
