package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/trace"
)

// RunMessage is the body of a message on the run queue (STEWARD_RUN_QUEUE_URL), for
// functions/worker to take (docs/ARCHITECTURE.md §10): a webhook's queued run (RunID), or a
// turn that stopped before its invocation's deadline (TurnID, continuing), or a Telegram
// update a linked chat sent (TelegramUpdate, docs/ARCHITECTURE.md §19). Exactly one of the
// three is set.
type RunMessage struct {
	OwnerID        uuid.UUID `json:"owner_id"`
	RunID          uuid.UUID `json:"run_id,omitzero"`
	TurnID         uuid.UUID `json:"turn_id,omitzero"`
	TelegramUpdate int64     `json:"telegram_update,omitzero"`
}

// names is how many things m names.
func (m RunMessage) names() int {
	n := 0
	for _, set := range []bool{m.RunID != uuid.Nil, m.TurnID != uuid.Nil, m.TelegramUpdate != 0} {
		if set {
			n++
		}
	}
	return n
}

// runQueue sends RunMessages to the run queue (awsapi.Queue).
type runQueue struct{ *awsapi.Queue }

func newRunQueue(cfg config.Config) (*runQueue, error) {
	q, err := awsapi.NewQueue(cfg.AWS, cfg.RunQueueURL)
	if err != nil {
		return nil, err
	}
	return &runQueue{q}, nil
}

// send puts one message on the queue.
func (q *runQueue) send(ctx context.Context, m RunMessage) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return q.Send(ctx, string(body))
}

// HandleRunMessages is the body of functions/worker: each record of an SQS batch from the run
// queue names a webhook's queued run, processed exactly once (autonomy.Scheduler.Handle: a
// run another worker or the scheduler's drain already took is done, not a failure). A
// record that is not a RunMessage, or whose run failed to start, is reported in
// BatchItemFailures (ReportBatchItemFailures), so only it returns to the queue — retried,
// then dead-lettered — and the rest of the batch is not redelivered.
func (a *App) HandleRunMessages(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	log := zerolog.Ctx(ctx)
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		rlog := log.With().Str("message_id", rec.MessageId).Logger()
		var m RunMessage
		dec := json.NewDecoder(bytes.NewReader([]byte(rec.Body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil || m.OwnerID == uuid.Nil || m.names() != 1 || dec.More() {
			rlog.Error().Int("bytes", len(rec.Body)).Msg("run queue message is not {owner_id, run_id}, {owner_id, turn_id} nor {owner_id, telegram_update}")
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		if m.TelegramUpdate != 0 {
			if !a.processTelegram(rlog.WithContext(ctx), m) {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
			continue
		}
		if m.TurnID != uuid.Nil {
			if !a.continueTurn(rlog.WithContext(ctx), m) {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			}
			continue
		}
		rep, err := a.Scheduler.Handle(rlog.WithContext(ctx), autonomy.Event{OwnerID: m.OwnerID, RunID: m.RunID})
		if err != nil {
			rlog.Error().Str("error", trace.Redact(err.Error())).Stringer("run_id", m.RunID).Msg("queued run failed to start")
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		ran := zerolog.Dict()
		if len(rep.Runs) == 1 {
			ran = ran.Str("status", string(rep.Runs[0].Status))
		}
		rlog.Info().Stringer("run_id", m.RunID).Bool("taken", len(rep.Runs) == 1).Dict("run", ran).Msg("queued run processed")
	}
	return resp, nil
}

// continueTurn continues a turn the message names, exactly once: a turn another invocation
// already took, or no longer continuing, is done, not a failure. It reports false when the
// message should return to the queue.
func (a *App) continueTurn(ctx context.Context, m RunMessage) bool {
	log := zerolog.Ctx(ctx)
	v, err := a.Runner.ContinueTurn(ctx, m.OwnerID, m.TurnID)
	var e *steward.Error
	if errors.As(err, &e) && e.Code == steward.CodeConflict {
		log.Info().Stringer("turn_id", m.TurnID).Bool("taken", false).Msg("continuing turn already taken")
		return true
	}
	if err != nil {
		log.Error().Str("error", trace.Redact(err.Error())).Stringer("turn_id", m.TurnID).Msg("continuing turn failed")
		return false
	}
	log.Info().Stringer("turn_id", m.TurnID).Bool("taken", true).Str("status", string(v.Status)).Msg("continuing turn processed")
	a.telegramContinued(ctx, m.OwnerID, v)
	return true
}

// telegramContinued sends a continued turn's outcome to its Telegram chat, when it is one
// (docs/ARCHITECTURE.md §19); a failure is logged, the turn is saved either way.
func (a *App) telegramContinued(ctx context.Context, ownerID uuid.UUID, v steward.View) {
	if a.Telegram == nil {
		return
	}
	if err := a.Telegram.Continued(ctx, ownerID, v); err != nil {
		zerolog.Ctx(ctx).Warn().Str("error", trace.Redact(err.Error())).Stringer("turn_id", v.TurnID).Msg("telegram: sending a continued turn's answer failed")
	}
}

// processTelegram runs a Telegram update the message names, exactly once (telegram.Service
// takes it once: a redelivery finds it taken and does nothing). It reports false when the
// message should return to the queue.
func (a *App) processTelegram(ctx context.Context, m RunMessage) bool {
	log := zerolog.Ctx(ctx)
	if a.Telegram == nil {
		log.Error().Int64("update_id", m.TelegramUpdate).Msg("a telegram update on the run queue, and no STEWARD_TELEGRAM_BOT_TOKEN here")
		return false
	}
	if err := a.Telegram.Process(ctx, m.OwnerID, m.TelegramUpdate); err != nil {
		log.Error().Str("error", trace.Redact(err.Error())).Int64("update_id", m.TelegramUpdate).Msg("telegram update failed")
		return false
	}
	log.Info().Int64("update_id", m.TelegramUpdate).Msg("telegram update processed")
	return true
}

// sendContinue is Runner.Continue on Lambda: the turn goes to the run queue for the worker.
func (a *App) sendContinue(ctx context.Context, ownerID, turnID uuid.UUID) error {
	ctx, cancel := context.WithTimeout(ctx, runQueueTimeout)
	defer cancel()
	return a.runs.send(ctx, RunMessage{OwnerID: ownerID, TurnID: turnID})
}

// continueStale is the scheduler's drain of continuing turns whose hand-off was lost (a
// failed send, a message dead-lettered): one door-side scan finds the turns continuing for
// longer than continueAfter across owners, and each is continued in its owner's own
// transactions, through the same exactly-once claim (one another invocation took meanwhile
// is skipped). An owner with none costs nothing.
func (a *App) continueStale(ctx context.Context) error {
	return a.continueSaved(ctx, a.Now().Add(-continueAfter))
}

// continueSaved continues the turns saved continuing before before (at most 20), each
// through the exactly-once claim.
func (a *App) continueSaved(ctx context.Context, before time.Time) error {
	turns, err := a.Door.ScanContinuingTurns(ctx, before, 20)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range turns {
		v, err := a.Runner.ContinueTurn(ctx, t.OwnerID, t.ID)
		if err != nil && steward.ErrorCode(err) != steward.CodeConflict {
			errs = append(errs, fmt.Errorf("continue turn %s of owner %s: %w", t.ID, t.OwnerID, err))
		}
		if err == nil {
			a.telegramContinued(ctx, t.OwnerID, v)
		}
	}
	return errors.Join(errs...)
}

// continueAfter is how long a turn may wait as continuing before the drain takes it.
const continueAfter = 3 * time.Minute

// recoverTurn is the sweep's recovery of a resuming turn whose confirm died
// (agent.Runner.Recover); one another process recovered first is skipped.
func (a *App) recoverTurn(ctx context.Context, ownerID, turnID uuid.UUID) error {
	if _, err := a.Runner.Recover(ctx, ownerID, turnID); err != nil && steward.ErrorCode(err) != steward.CodeConflict {
		return err
	}
	return nil
}
