// Package autonomy is Steward acting without a human at the keyboard: scheduled jobs (the
// morning briefing, the weekly review), signed webhooks from outside services, and the one
// autonomous Runner every such run goes through.
//
// A run is claimed exactly once (its idempotency key is the scheduled time, or the sender's
// webhook-id), checks the kill switch before it starts (an engaged switch records the run
// skipped, never drops it), runs an ordinary agent turn whose trigger says where it came
// from, and records its lifecycle in job_runs: queued → running → completed | failed |
// skipped | aborted | suspended. No human is present, so the turn's writes suspend into the
// owner's approval inbox unless a standing rule decides them — and for runs triggered by
// outside data (webhooks) standing allow rules never apply (internal/safety).
package autonomy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/store"
)

// Runner runs every autonomous turn: scheduled jobs, manual job runs and webhook events.
type Runner struct {
	// Recorder records each run's outcome (and is the agent runner's Continued hook).
	Recorder
	// Agent runs the turns. Its Control must be set (the kill switch is checked before each
	// model call and tool dispatch) and its Gate decides every write.
	Agent Agent
}

// Agent starts and reads turns; *agent.Runner implements it.
type Agent interface {
	Start(ctx context.Context, in agent.Input, emit agent.Emit) (steward.View, error)
	Turn(ctx context.Context, ownerID, turnID uuid.UUID) (steward.View, error)
}

// Recorder records how runs end: the outcome of a run's turn, with an activity event, and
// the owner's notifications delivered after it. It calls no turn, so the agent runner is
// built with its Continued (agent.Hooks) before the Runner that starts turns
// (docs/ARCHITECTURE.md §7).
type Recorder struct {
	// Store reaches the owner's rows.
	Store *store.Store
	// Notifier, when set, delivers the owner's new notifications after each run.
	Notifier Notifier
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// Notifier delivers an owner's pending notifications; internal/delivery implements it.
type Notifier interface {
	Flush(ctx context.Context, ownerID uuid.UUID) error
}

// claim records a run exactly once. With a kill switch engaged the run is recorded skipped,
// with the reason, instead of running. claimed is false when the run was claimed before.
func (r *Runner) claim(ctx context.Context, ownerID uuid.UUID, n store.NewRun) (run store.JobRun, claimed bool, err error) {
	n.Now = r.Now.Now()
	err = r.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		ctl, err := tx.Safety.Controls(ctx)
		if err != nil {
			return err
		}
		n.Status = store.RunRunning
		if killed, why := ctl.Killed(); killed {
			n.Status, n.Error = store.RunSkipped, why
		}
		if run, claimed, err = tx.Runs.Claim(ctx, n); err != nil || !claimed {
			return err
		}
		return appendRunEvent(ctx, tx, run)
	})
	return run, claimed, err
}

// begin takes a queued run (a webhook event): running, or skipped when a kill switch is
// engaged. Exactly one caller wins; the others get an error matching store.ErrConflict.
func (r *Runner) begin(ctx context.Context, ownerID, runID uuid.UUID) (run store.JobRun, err error) {
	err = r.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		ctl, err := tx.Safety.Controls(ctx)
		if err != nil {
			return err
		}
		status, reason := store.RunRunning, ""
		if killed, why := ctl.Killed(); killed {
			status, reason = store.RunSkipped, why
		}
		if run, err = tx.Runs.StartQueued(ctx, runID, status, reason, r.Now.Now()); err != nil {
			return err
		}
		return appendRunEvent(ctx, tx, run)
	})
	return run, err
}

// Compose gathers a run's context in the owner's transaction and writes the turn's message.
type Compose func(ctx context.Context, tx *store.Tx) (string, error)

// execute runs a claimed, running run's turn and records the outcome: the turn's status
// (completed, suspended, aborted, failed), or skipped when the turn was refused admission (a
// kill switch engaged since the claim, a budget exhausted).
// taint names untrusted content compose puts in the message (a job's gathered mail): the
// turn starts tainted. A compose that returns no message has nothing to do: the run is
// recorded skipped, without a turn.
func (r *Runner) execute(ctx context.Context, run store.JobRun, trigger steward.Trigger, taint string, compose Compose) (store.JobRun, error) {
	log := zerolog.Ctx(ctx).With().Stringer("run_id", run.ID).Stringer("owner_id", run.OwnerID).Str("job", run.Job).Logger()
	ctx = log.WithContext(ctx)
	var msg string
	err := r.Store.WithOwner(ctx, run.OwnerID, func(tx *store.Tx) error {
		var err error
		msg, err = compose(ctx, tx)
		return err
	})
	if err != nil {
		log.Error().Err(err).Msg("gathering the run's context failed")
		return r.finish(ctx, run, store.RunFailed, nil, "gathering the run's context failed")
	}
	if msg == "" {
		return r.finish(ctx, run, store.RunSkipped, nil, "nothing to do")
	}
	view, err := r.Agent.Start(ctx, agent.Input{OwnerID: run.OwnerID, Message: msg, Trigger: trigger, Taint: taint}, nil)
	if err != nil {
		var e *steward.Error
		if errors.As(err, &e) && (e.Code == steward.CodeKilled || e.Code == steward.CodeOverBudget) {
			return r.finish(ctx, run, store.RunSkipped, nil, e.Message)
		}
		log.Error().Err(err).Msg("the run's turn did not start")
		return r.finish(ctx, run, store.RunFailed, nil, "the turn could not start")
	}
	turnID := view.TurnID
	if view.Status == steward.StatusContinuing {
		// The turn goes on in another invocation: the run stays running, with its turn, and
		// Continued finishes it when the turn ends.
		err := r.Store.WithOwner(ctx, run.OwnerID, func(tx *store.Tx) error {
			var err error
			run, err = tx.Runs.AttachTurn(ctx, run.ID, turnID)
			return err
		})
		if err != nil {
			return run, fmt.Errorf("record the continuing turn of run %s: %w", run.ID, err)
		}
		log.Info().Stringer("turn_id", turnID).Msg("autonomous run continues with its turn in another invocation")
		// The invocation that continued the turn may have ended it before the turn was
		// attached (it then found no run to finish): finish the run here.
		if v, err := r.Agent.Turn(ctx, run.OwnerID, turnID); err == nil && v.Status != steward.StatusContinuing && v.Status != steward.StatusRunning {
			r.Continued(ctx, run.OwnerID, v)
			if err := r.Store.WithOwner(ctx, run.OwnerID, func(tx *store.Tx) error {
				var err error
				run, err = tx.Runs.Get(ctx, run.ID)
				return err
			}); err != nil {
				return run, err
			}
		}
		return run, nil
	}
	return r.conclude(ctx, run, view)
}

// conclude records a run's outcome from its turn's final view and delivers the owner's
// notifications.
func (r *Recorder) conclude(ctx context.Context, run store.JobRun, view steward.View) (store.JobRun, error) {
	log := zerolog.Ctx(ctx)
	status := store.RunFailed
	switch view.Status {
	case steward.StatusCompleted:
		status = store.RunCompleted
	case steward.StatusSuspended:
		status = store.RunSuspended
	case steward.StatusAborted:
		status = store.RunAborted
	}
	turnID := view.TurnID
	run, err := r.finish(ctx, run, status, &turnID, view.Error)
	if err == nil && r.Notifier != nil {
		if err := r.Notifier.Flush(ctx, run.OwnerID); err != nil {
			log.Warn().Err(err).Msg("notification delivery failed; the next tick retries")
		}
	}
	return run, err
}

// Continued is an agent.Hooks.Ended listener: a continued turn ended, and the run still running
// whose turn it is (if any) is finished with the turn's outcome — once: the finish is
// conditional on the run still running, and a turn is continued by one invocation at a time.
func (r *Recorder) Continued(ctx context.Context, ownerID uuid.UUID, view steward.View) {
	log := zerolog.Ctx(ctx).With().Stringer("owner_id", ownerID).Stringer("turn_id", view.TurnID).Logger()
	var run store.JobRun
	var ok bool
	err := r.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		run, ok, err = tx.Runs.RunningOfTurn(ctx, view.TurnID)
		return err
	})
	if err != nil {
		log.Error().Err(err).Msg("finding the run of a continued turn failed; the sweep fails it once stale")
		return
	}
	if !ok {
		return
	}
	ctx = log.With().Stringer("run_id", run.ID).Str("job", run.Job).Logger().WithContext(ctx)
	if _, err := r.conclude(ctx, run, view); err != nil && !errors.Is(err, store.ErrConflict) {
		zerolog.Ctx(ctx).Error().Err(err).Msg("recording the outcome of a continued run failed")
	}
}

// finish records a running run's outcome with an activity event.
func (r *Recorder) finish(ctx context.Context, run store.JobRun, status store.RunStatus, turnID *uuid.UUID, reason string) (store.JobRun, error) {
	err := r.Store.WithOwner(ctx, run.OwnerID, func(tx *store.Tx) error {
		var err error
		if run, err = tx.Runs.Finish(ctx, run.ID, status, turnID, reason, r.Now.Now()); err != nil {
			return err
		}
		return appendRunEvent(ctx, tx, run)
	})
	if err != nil {
		return run, fmt.Errorf("record outcome of run %s: %w", run.ID, err)
	}
	zerolog.Ctx(ctx).Info().Stringer("run_id", run.ID).Str("job", run.Job).Str("status", string(run.Status)).Msg("autonomous run")
	return run, nil
}

// appendRunEvent writes a run's lifecycle step to the owner's audit log (the activity
// record), with its trigger and, once known, the turn whose trace it links to.
func appendRunEvent(ctx context.Context, tx *store.Tx, run store.JobRun) error {
	data, err := json.Marshal(map[string]any{"run_id": run.ID, "job": run.Job, "trigger": run.Trigger,
		"status": run.Status, "scheduled_for": run.ScheduledFor, "turn_id": run.TurnID, "error": run.Error})
	if err != nil {
		return err
	}
	return tx.Journal.AppendEvents(ctx, nil, []steward.NewEvent{{Kind: "autonomy_run", Data: data}})
}

// triggerOf is the turn trigger of a run's trigger.
func triggerOf(runTrigger string) steward.Trigger {
	switch runTrigger {
	case store.RunByWebhook:
		return steward.TriggerWebhook
	case store.RunByCLI:
		return steward.TriggerCLI
	}
	return steward.TriggerSchedule
}

// RunInstruction claims the run of job scheduled for at — once: a second claim of the same
// (owner, job, time), by another scheduler, tick or retry, returns claimed false — and runs
// message as its autonomous turn (an owner's automation, internal/automation).
func (r *Runner) RunInstruction(ctx context.Context, ownerID uuid.UUID, job string, at time.Time, message string) (store.JobRun, bool, error) {
	run, claimed, err := r.claim(ctx, ownerID, store.NewRun{Job: job, Trigger: store.RunBySchedule, ScheduledFor: at})
	if err != nil || !claimed || run.Status != store.RunRunning {
		return run, claimed, err
	}
	run, err = r.execute(ctx, run, steward.TriggerSchedule, "", func(context.Context, *store.Tx) (string, error) { return message, nil })
	return run, true, err
}
