package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/automation"
	"github.com/stewardhq/steward/internal/config"
)

const automationsUsage = `Usage:
  steward automations list [--json] [--owner ID]
  steward automations add --schedule WHEN INSTRUCTION… [--owner ID]
  steward automations pause|resume|rm ID [--owner ID]
  steward automations zone [ZONE] [--owner ID]

  list    each automation: id, status, schedule, its next run and last result
  add     an instruction Steward runs by itself on a schedule read in the owner's zone:
          cron (5 fields, "30 7 * * 1-5") or words ("every weekday at 7:30", "every first
          monday of the month at 9"), at least 15 minutes apart; the answer goes to the
          owner's default channel
  pause   stop running it until resumed; resume runs it again from now
  rm      delete it (its past runs stay in the history)
  zone    print the owner's time zone, or set it (an IANA name such as Europe/Berlin)
`

const remindersUsage = `Usage:
  steward reminders list [--all] [--json] [--owner ID]
  steward reminders add --at WHEN TEXT… [--owner ID]
  steward reminders cancel ID [--owner ID]

  add     a notification on the owner's default channel at WHEN: "17:00", "tomorrow 9:00",
          "in 20 minutes" (read in the owner's zone: steward automations zone) or RFC 3339
  list    the pending reminders, soonest first; --all adds the fired and cancelled
`

func runAutomations(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, automationsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list": automationsList, "add": automationsAdd, "zone": automationsZone,
		"pause":  automationsSet("pause"),
		"resume": automationsSet("resume"),
		"rm":     automationsSet("rm"),
	})
}

func runReminders(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, remindersUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"list": remindersList, "add": remindersAdd, "cancel": remindersCancel,
	})
}

func automationsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("automations list", flag.ContinueOnError)
	owner, asJSON := ownerFlag(fs), fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, automationsUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.Automations.ListAutomations(ctx, owners[0])
		if err != nil {
			return err
		}
		if *asJSON {
			b, _ := json.Marshal(list)
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tSCHEDULE\tNEXT\tLAST\tINSTRUCTION")
		for _, v := range list {
			next, last := "-", "-"
			if len(v.NextText) > 0 {
				next = v.NextText[0]
			}
			if v.Last != nil {
				last = string(v.Last.Status)
			}
			when := v.Cron
			if v.Words != "" {
				when = v.Words
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, v.Status, when, next, last, clip(v.Instruction, 50))
		}
		return tw.Flush()
	})
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func automationsAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("automations add", flag.ContinueOnError)
	owner, schedule := ownerFlag(fs), fs.String("schedule", "", "cron or words, e.g. \"every weekday at 7:30\"")
	rest, err := parseFlags(fs, args, automationsUsage, 1, 1<<20)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		v, err := a.Automations.CreateAutomation(ctx, owners[0], automation.Input{Instruction: strings.Join(rest, " "), Schedule: *schedule})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s  %s  next: %s\n", v.ID, v.Cron, strings.Join(v.NextText, "; "))
		return nil
	})
}

func automationsSet(op string) func(context.Context, env, config.Config, []string) error {
	return func(ctx context.Context, e env, cfg config.Config, args []string) error {
		fs := flag.NewFlagSet("automations "+op, flag.ContinueOnError)
		owner := ownerFlag(fs)
		rest, err := parseFlags(fs, args, automationsUsage, 1, 1)
		if err != nil {
			return err
		}
		id, err := uuid.Parse(rest[0])
		if err != nil {
			return fmt.Errorf("%q is not an automation id (steward automations list)", rest[0])
		}
		return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
			var v automation.View
			switch op {
			case "pause":
				v, err = a.Automations.Pause(ctx, owners[0], id)
			case "resume":
				v, err = a.Automations.Resume(ctx, owners[0], id)
			default:
				if err = a.Automations.Delete(ctx, owners[0], id); err == nil {
					fmt.Fprintf(e.stdout, "%s  deleted\n", id)
				}
				return err
			}
			if err == nil {
				fmt.Fprintf(e.stdout, "%s  %s\n", v.ID, v.Status)
			}
			return err
		})
	}
}

func automationsZone(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("automations zone", flag.ContinueOnError)
	owner := ownerFlag(fs)
	rest, err := parseFlags(fs, args, automationsUsage, 0, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if len(rest) == 1 {
			tz, err := a.Automations.SetZone(ctx, owners[0], rest[0])
			if err == nil {
				fmt.Fprintln(e.stdout, tz)
			}
			return err
		}
		loc, err := a.Automations.Zone(ctx, owners[0])
		if err == nil {
			fmt.Fprintln(e.stdout, loc)
		}
		return err
	})
}

func remindersList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("reminders list", flag.ContinueOnError)
	owner, all, asJSON := ownerFlag(fs), fs.Bool("all", false, "the fired and cancelled too"), fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, remindersUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.Automations.ListReminders(ctx, owners[0], *all)
		if err != nil {
			return err
		}
		if *asJSON {
			b, _ := json.Marshal(list)
			fmt.Fprintln(e.stdout, string(b))
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tWHEN\tTEXT")
		for _, r := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Status, r.When, clip(r.Text, 60))
		}
		return tw.Flush()
	})
}

func remindersAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("reminders add", flag.ContinueOnError)
	owner, at := ownerFlag(fs), fs.String("at", "", "when: 17:00, tomorrow 9:00, in 20 minutes, RFC 3339")
	rest, err := parseFlags(fs, args, remindersUsage, 1, 1<<20)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		r, err := a.Automations.CreateReminder(ctx, owners[0], strings.Join(rest, " "), *at, nil)
		if err == nil {
			fmt.Fprintf(e.stdout, "%s  %s\n", r.ID, r.When)
		}
		return err
	})
}

func remindersCancel(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("reminders cancel", flag.ContinueOnError)
	owner := ownerFlag(fs)
	rest, err := parseFlags(fs, args, remindersUsage, 1, 1)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(rest[0])
	if err != nil {
		return fmt.Errorf("%q is not a reminder id (steward reminders list)", rest[0])
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		r, err := a.Automations.CancelReminder(ctx, owners[0], id)
		if err == nil {
			fmt.Fprintf(e.stdout, "%s  %s\n", r.ID, r.Status)
		}
		return err
	})
}
