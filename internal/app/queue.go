package app

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/awsapi"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/telegram"
	"github.com/stewardhq/steward/internal/work"
)

// newSpine builds the work spine (internal/work, docs/ARCHITECTURE.md §10) over the pools,
// with the run queue (STEWARD_RUN_QUEUE_URL) when one is set: functions/worker takes what
// is sent there (Work.HandleMessages).
func newSpine(cfg config.Config, a *App, log zerolog.Logger) (*work.Spine, error) {
	s := &work.Spine{Store: a.Store, Door: a.Door, Now: a.Now, Logger: log}
	if cfg.RunQueueURL != "" {
		q, err := awsapi.NewQueue(cfg.AWS, cfg.RunQueueURL)
		if err != nil {
			return nil, err
		}
		s.Queue = q
	}
	return s, nil
}

// registerWork registers every kind of work with its worker: one line per face or service
// that hands work on.
func (a *App) registerWork() {
	a.Work.Register(a.Webhooks.Kind())
	a.Work.Register(a.Deliverer.Kind())
	a.Work.Register(work.Kind{Name: agent.ContinueKind, Grace: continueAfter, Work: a.continueTurn})
	for _, k := range a.Due.Kinds() {
		a.Work.Register(k) // reminders and automation runs, due at their times (docs/AUTOMATIONS.md)
	}
	if a.Telegram != nil {
		a.Work.Register(a.Telegram.Kind())
	}
}

// continueAfter is how long a turn may wait as continuing before the drain takes it.
const continueAfter = 3 * time.Minute

// continueTurn is the worker of a turn saved continuing (agent.ContinueKind): it continues
// the turn through its exactly-once claim; a turn another invocation already took, or no
// longer continuing, is done, not a failure. The turn's end reaches agent.Hooks.Ended.
func (a *App) continueTurn(ctx context.Context, ownerID uuid.UUID, key string) error {
	turnID, err := uuid.Parse(key)
	if err != nil {
		return err
	}
	log := zerolog.Ctx(ctx)
	v, err := a.Runner.ContinueTurn(ctx, ownerID, turnID)
	if steward.ErrorCode(err) == steward.CodeConflict {
		log.Info().Stringer("turn_id", turnID).Bool("taken", false).Msg("continuing turn already taken")
		return nil
	}
	if err != nil {
		return err
	}
	log.Info().Stringer("turn_id", turnID).Bool("taken", true).Str("status", string(v.Status)).Msg("continuing turn processed")
	return nil
}

// newTelegram builds two-way Telegram (docs/ARCHITECTURE.md §19) when a bot token is set:
// the deployment's bot serves the chats owners linked; their updates arrive on the links'
// callback. Its Runner and Buttons are set once the runner and the links are built.
func newTelegram(cfg config.Config, a *App, sender *channel.Sender) *telegram.Service {
	if cfg.TelegramBotToken == "" {
		return nil
	}
	return &telegram.Service{Store: a.Store, Door: a.Door, Sender: sender,
		Bot:       channel.Target{Name: "telegram bot", Kind: channel.Telegram, URL: cfg.TelegramAPIURL, Secrets: channel.Secrets{Token: cfg.TelegramBotToken}},
		Documents: a.Documents, Voice: a.Voice, Hand: a.Work.Hand, Now: a.Now}
}

// recoverTurn is the sweep's recovery of a resuming turn whose confirm died
// (agent.Runner.Recover); one another process recovered first is skipped.
func (a *App) recoverTurn(ctx context.Context, ownerID, turnID uuid.UUID) error {
	if _, err := a.Runner.Recover(ctx, ownerID, turnID); err != nil && steward.ErrorCode(err) != steward.CodeConflict {
		return err
	}
	return nil
}
