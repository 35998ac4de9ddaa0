package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/erasure"
	"github.com/stewardhq/steward/internal/steward"
)

const conversationsUsage = `Usage:
  steward conversations list [--owner ID]
  steward conversations search WORDS [--owner ID]
  steward conversations rename ID TITLE [--owner ID]
  steward conversations delete ID [--facts keep|forget] [--yes] [--owner ID]

  list    the owner's conversations, most recently active first: id, last activity, title
  search  conversations whose title or messages hold WORDS, newest first, by day
  rename  set a conversation's title
  delete  delete a conversation with its messages, turns, tool calls and the memory made
          from it (docs/DATA.md). Without --yes it only says what would go: the facts
          extracted from it are listed, and --facts says whether to keep or forget them.
`

const exportUsage = `Usage:
  steward export [--owner ID] [-o FILE]

  Write everything of the owner's as one zip (docs/DATA.md) to FILE, or to stdout.
`

const forgetUsage = `Usage:
  steward forget --from TIME --to TIME [--yes] [--owner ID]

  Forget everything of a time range (RFC 3339 times or YYYY-MM-DD dates, UTC): the
  conversations active in it, the memory and documents created in it. Without --yes it only
  counts what would go.
`

func runConversations(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, conversationsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list":   conversationsList,
		"search": conversationsSearch,
		"rename": conversationsRename,
		"delete": conversationsDelete,
	})
}

func conversationsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("conversations list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, conversationsUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		convs, err := a.Activity.Conversations(ctx, owners[0])
		for _, c := range convs {
			fmt.Fprintf(e.stdout, "%s  %s  %s\n", c.ID, c.UpdatedAt.UTC().Format("2006-01-02 15:04"), c.Title)
		}
		return err
	})
}

func conversationsSearch(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("conversations search", flag.ContinueOnError)
	owner := ownerFlag(fs)
	words, err := parseFlags(fs, args, conversationsUsage, 1, 100)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		days, err := a.Erasure.Search(ctx, owners[0], strings.Join(words, " "))
		for _, d := range days {
			fmt.Fprintln(e.stdout, d.Date)
			for _, c := range d.Conversations {
				fmt.Fprintf(e.stdout, "  %s  %s\n", c.ID, c.Title)
			}
		}
		return err
	})
}

func conversationsRename(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("conversations rename", flag.ContinueOnError)
	owner := ownerFlag(fs)
	rest, err := parseFlags(fs, args, conversationsUsage, 2, 100)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(rest[0])
	if err != nil {
		return usageError{msg: "ID must be a conversation id (steward conversations list)", usage: conversationsUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		c, err := a.Erasure.Rename(ctx, owners[0], id, strings.Join(rest[1:], " "))
		if err == nil {
			fmt.Fprintf(e.stdout, "%s  %s\n", c.ID, c.Title)
		}
		return err
	})
}

func conversationsDelete(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("conversations delete", flag.ContinueOnError)
	owner := ownerFlag(fs)
	facts := fs.String("facts", "", "keep or forget the facts extracted from it")
	yes := fs.Bool("yes", false, "delete (without it: say what would go)")
	rest, err := parseFlags(fs, args, conversationsUsage, 1, 1)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(rest[0])
	if err != nil {
		return usageError{msg: "ID must be a conversation id (steward conversations list)", usage: conversationsUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if !*yes {
			fs, err := a.Erasure.FactsOf(ctx, owners[0], id)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Deleting %s removes its messages, turns, tool calls and the memory made from it.\n", id)
			if len(fs) > 0 {
				fmt.Fprintf(e.stdout, "%d facts were extracted from it (--facts keep or --facts forget):\n", len(fs))
				for _, f := range fs {
					fmt.Fprintf(e.stdout, "  %s  %s\n", f.ID, f.Content)
				}
			}
			fmt.Fprintln(e.stdout, "Nothing was deleted: run again with --yes.")
			return nil
		}
		d, err := a.Erasure.DeleteConversation(ctx, owners[0], id, erasure.Facts(*facts))
		if err == nil {
			fmt.Fprintf(e.stdout, "Deleted: %d turns, %d messages, %d tool calls, %d memory chunks, %d facts forgotten, %d kept.\n",
				d.Turns, d.Messages, d.ToolCalls, d.MemoryChunks, d.FactsForgot, d.FactsKept)
		}
		return err
	})
}

func runExport(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	owner := ownerFlag(fs)
	out := fs.String("o", "", "write the zip to this file (default: stdout)")
	if _, err := parseFlags(fs, args, exportUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if *out == "" {
			return a.Export.Write(ctx, owners[0], e.stdout)
		}
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		if err := a.Export.Write(ctx, owners[0], f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

func runForget(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("forget", flag.ContinueOnError)
	owner := ownerFlag(fs)
	from, to := fs.String("from", "", "start of the range"), fs.String("to", "", "end of the range (excluded)")
	yes := fs.Bool("yes", false, "forget (without it: count what would go)")
	if _, err := parseFlags(fs, args, forgetUsage, 0, 0); err != nil {
		return err
	}
	f, err := parseTime(*from)
	if err != nil {
		return usageError{msg: "--from: " + err.Error(), usage: forgetUsage}
	}
	t, err := parseTime(*to)
	if err != nil {
		return usageError{msg: "--to: " + err.Error(), usage: forgetUsage}
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		n, err := a.Erasure.Forget(ctx, owners[0], erasure.Forget{From: &f, To: &t, Confirm: *yes})
		if err != nil {
			return err
		}
		verb := "Would forget"
		if n.Done {
			verb = "Forgot"
		}
		b, _ := json.Marshal(n)
		fmt.Fprintf(e.stdout, "%s %d conversations, %d memory chunks, %d facts, %d documents. %s\n", verb, n.Conversations, n.MemoryChunks, n.Facts, n.Documents, b)
		return nil
	})
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date (UTC midnight).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, steward.Errorf(steward.CodeInvalid, "%q is neither an RFC 3339 time nor a YYYY-MM-DD date", s)
	}
	return t, nil
}
