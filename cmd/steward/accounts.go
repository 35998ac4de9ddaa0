package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
)

const accountsUsage = `Usage:
  steward accounts add-mail --imap URL --smtp URL --username U --password - [--from ADDRESS] [--owner ID]
  steward accounts add-calendar --caldav URL --username U --password - [--timezone ZONE] [--owner ID]
  steward accounts list|test KIND|remove KIND [--owner ID]

  add-mail      connect the owner's mail: imaps://host (implicit TLS) or imap://host (STARTTLS),
                smtps://host or smtp://host:587; Steward logs in to both first (docs/MAIL.md)
  add-calendar  connect the owner's CalDAV calendar (https://…); --timezone is the owner's IANA
                zone events are listed in (default UTC)
  list          the owner's accounts as JSON lines (never a password)
  test KIND     log in again (mail or calendar) and say whether it works
  remove KIND   remove the mail or calendar account
  --password -  reads the password (or an app password) from stdin
`

func runAccounts(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, accountsUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add-mail":     accountsAddMail,
		"add-calendar": accountsAddCalendar,
		"list":         accountsList,
		"test":         accountsTest,
		"remove":       accountsRemove,
	})
}

// password reads "-" from stdin.
func password(e env, p string) string {
	if p != "-" {
		return p
	}
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	return strings.TrimRight(line, "\r\n")
}

// printJSON writes v as one JSON line.
func printJSON(e env, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(e.stdout, string(b))
}

func accountsAddMail(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("accounts add-mail", flag.ContinueOnError)
	owner := ownerFlag(fs)
	var in accounts.MailInput
	fs.StringVar(&in.IMAPURL, "imap", "", "IMAP server URL")
	fs.StringVar(&in.SMTPURL, "smtp", "", "SMTP server URL")
	fs.StringVar(&in.Username, "username", "", "login name")
	fs.StringVar(&in.Password, "password", "", "password or app password (- reads stdin)")
	fs.StringVar(&in.From, "from", "", "the sender address (default the username)")
	if _, err := parseFlags(fs, args, accountsUsage, 0, 0); err != nil {
		return err
	}
	in.Password = password(e, in.Password)
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		v, err := a.Accounts.AddMail(ctx, owners[0], in)
		if err != nil {
			return fmt.Errorf("accounts add-mail: %w", err)
		}
		printJSON(e, v)
		return nil
	})
}

func accountsAddCalendar(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("accounts add-calendar", flag.ContinueOnError)
	owner := ownerFlag(fs)
	var in accounts.CalendarInput
	fs.StringVar(&in.CalDAVURL, "caldav", "", "CalDAV URL")
	fs.StringVar(&in.Username, "username", "", "login name")
	fs.StringVar(&in.Password, "password", "", "password or app password (- reads stdin)")
	fs.StringVar(&in.TimeZone, "timezone", "", "the owner's IANA time zone")
	if _, err := parseFlags(fs, args, accountsUsage, 0, 0); err != nil {
		return err
	}
	in.Password = password(e, in.Password)
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		v, err := a.Accounts.AddCalendar(ctx, owners[0], in)
		if err != nil {
			return fmt.Errorf("accounts add-calendar: %w", err)
		}
		printJSON(e, v)
		return nil
	})
}

func accountsList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("accounts list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, accountsUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		list, err := a.Accounts.List(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("accounts list: %w", err)
		}
		for _, v := range list {
			printJSON(e, v)
		}
		return nil
	})
}

func accountsTest(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("accounts test", flag.ContinueOnError)
	owner := ownerFlag(fs)
	kinds, err := parseFlags(fs, args, accountsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		res, err := a.Accounts.Test(ctx, owners[0], kinds[0])
		if err != nil {
			return fmt.Errorf("accounts test: %w", err)
		}
		printJSON(e, res)
		if !res.OK {
			return fmt.Errorf("accounts test: %s", res.Error)
		}
		return nil
	})
}

func accountsRemove(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("accounts remove", flag.ContinueOnError)
	owner := ownerFlag(fs)
	kinds, err := parseFlags(fs, args, accountsUsage, 1, 1)
	if err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		if err := a.Accounts.Remove(ctx, owners[0], kinds[0]); err != nil {
			return fmt.Errorf("accounts remove: %w", err)
		}
		fmt.Fprintf(e.stdout, "removed the %s account\n", kinds[0])
		return nil
	})
}
