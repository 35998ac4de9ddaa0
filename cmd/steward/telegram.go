package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/telegram"
)

const telegramUsage = `Usage:
  steward telegram link [--owner ID]
  steward telegram list [--owner ID]
  steward telegram unlink CHAT_ID [--owner ID]

  link    print a one-time code; send it to the deployment's bot in the Telegram chat to
          link (it works once, for 15 minutes). Needs STEWARD_TELEGRAM_BOT_TOKEN.
  list    the linked chats, as JSON lines
  unlink  stop serving a chat (docs/TELEGRAM.md)
`

func runTelegram(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, telegramUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"link":   telegramLink,
		"list":   telegramList,
		"unlink": telegramUnlink,
	})
}

// withTelegram runs fn with the deployment's bot service and the owner, or says two-way
// Telegram is off.
func withTelegram(ctx context.Context, cfg config.Config, owner *uuidFlag, fn func(t *telegram.Service, owner uuid.UUID) error) error {
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if a.Telegram == nil {
			return errors.New("two-way Telegram is off: set STEWARD_TELEGRAM_BOT_TOKEN (and STEWARD_TELEGRAM_WEBHOOK_SECRET); see docs/TELEGRAM.md")
		}
		return fn(a.Telegram, owners[0])
	})
}

func telegramLink(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("telegram link", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, telegramUsage, 0, 0); err != nil {
		return err
	}
	return withTelegram(ctx, cfg, owner, func(t *telegram.Service, owner uuid.UUID) error {
		code, exp, err := t.Code(ctx, owner)
		if err != nil {
			return fmt.Errorf("telegram link: %w", err)
		}
		fmt.Fprintf(e.stdout, "%s\n", code)
		fmt.Fprintf(e.stderr, "Send this code to the bot in the Telegram chat to link (it works once, until %s).\n", exp.UTC().Format("15:04 MST"))
		return nil
	})
}

func telegramList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("telegram list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, telegramUsage, 0, 0); err != nil {
		return err
	}
	return withTelegram(ctx, cfg, owner, func(t *telegram.Service, owner uuid.UUID) error {
		chats, err := t.Chats(ctx, owner)
		if err != nil {
			return fmt.Errorf("telegram list: %w", err)
		}
		for _, c := range chats {
			b, _ := json.Marshal(c)
			fmt.Fprintln(e.stdout, string(b))
		}
		return nil
	})
}

func telegramUnlink(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("telegram unlink", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, telegramUsage, 1, 1)
	if err != nil {
		return err
	}
	chat, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return usageError{msg: fmt.Sprintf("CHAT_ID %q is not a number (steward telegram list shows them)", pos[0]), usage: telegramUsage}
	}
	return withTelegram(ctx, cfg, owner, func(t *telegram.Service, owner uuid.UUID) error {
		if err := t.Unlink(ctx, owner, chat); err != nil {
			return fmt.Errorf("telegram unlink: %w", err)
		}
		fmt.Fprintf(e.stdout, "unlinked chat %d\n", chat)
		return nil
	})
}
