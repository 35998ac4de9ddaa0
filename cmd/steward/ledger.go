package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/app"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/ledger"
)

const ledgerUsage = `Usage:
  steward ledger import FILE --account NAME [--owner ID] [--currency EUR] [--date-format DD.MM.YYYY]
  steward ledger seed [--owner ID]

  import  import a bank statement (CSV) into the owner's ledger, like POST /v1/ledger/import;
          prints {"imported","duplicates","rejected":[{"line","reason"}]}. Importing the same
          statement again imports nothing.
  seed    load the demo history (six months on account Giro, EUR, the same every time) into
          the owner's ledger; prints {"recorded","duplicates","uncategorized"}. Seeding again
          records nothing.
`

func runLedger(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, ledgerUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"import": ledgerImport,
		"seed":   ledgerSeed,
	})
}

func ledgerImport(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("ledger import", flag.ContinueOnError)
	owner := ownerFlag(fs)
	account := fs.String("account", "", "the asset account to import into (created if missing)")
	currency := fs.String("currency", "", "the account's currency when it is created (default EUR)")
	dateFormat := fs.String("date-format", "", "the statement's date format (detected if empty)")
	files, err := parseFlags(fs, args, ledgerUsage, 1, 1)
	if err != nil {
		return err
	}
	if *account == "" {
		return usageError{msg: "--account NAME is required", usage: ledgerUsage}
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return fmt.Errorf("ledger import: %w", err)
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		res, err := a.Ledger.Import(ctx, owners[0], ledger.ImportRequest{Account: *account, Currency: *currency,
			DateFormat: *dateFormat, CSV: data})
		if err != nil {
			return fmt.Errorf("ledger import: %w", err)
		}
		b, _ := json.Marshal(res)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	})
}

func ledgerSeed(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("ledger seed", flag.ContinueOnError)
	owner := ownerFlag(fs)
	if _, err := parseFlags(fs, args, ledgerUsage, 0, 0); err != nil {
		return err
	}
	return withApp(ctx, cfg, owner, false, func(a *app.App, owners []uuid.UUID) error {
		res, err := a.Ledger.Seed(ctx, owners[0])
		if err != nil {
			return fmt.Errorf("ledger seed: %w", err)
		}
		b, _ := json.Marshal(res)
		fmt.Fprintln(e.stdout, string(b))
		return nil
	})
}
