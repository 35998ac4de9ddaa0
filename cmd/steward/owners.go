package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/operator"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

const ownersUsage = `Usage:
  steward owners add NAME [--json]
  steward owners list [--json]
  steward owners budget --owner ID [--messages N] [--cost-usd X] [--json]

  add     create an owner and its first API key. The key is printed once and cannot be
          shown again (only its hash is stored). --json prints {"owner_id","name","api_key"}.
  list    list every owner.
  budget  set the owner's daily limits, counted since midnight UTC: --messages, the chats a
          day (a whole number); --cost-usd, the model cost a day in dollars (at most 6
          decimals, at most 1000000). Give one or both; the other is kept. There is no
          "unlimited" (budgets fail closed): 0 refuses every new turn. New owners get 500
          messages and $5. Prints the resulting limits; --json prints
          {"owner_id","message_limit","cost_limit_usd","cost_limit_micros"}.

All connect as DATABASE_URL (steward_owner).
`

func runOwners(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, ownersUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add":    ownersAdd,
		"list":   ownersList,
		"budget": ownersBudget,
	})
}

// operatorService is the operator's service (internal/operator): under `steward remote`, the
// deployment's migrate function; else a connection as DATABASE_URL. done releases it.
func operatorService(ctx context.Context, e env, cfg config.Config) (svc operator.Service, done func(), err error) {
	if e.remote != nil {
		return *e.remote, func() {}, nil
	}
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return svc, nil, err
	}
	return operator.LocalService(operator.Local{Door: door}), door.Close, nil
}

// openDoor connects as DATABASE_URL through the store's one door for cross-owner access.
func openDoor(ctx context.Context, cfg config.Config) (*store.Door, error) {
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	door, err := store.OpenDoor(octx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", store.VectorError(err))
	}
	return door, nil
}

func ownersAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("owners add", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args, ownersUsage, 1, 1)
	if err != nil {
		return err
	}
	// Check the name before connecting, so a bad name fails the same way with or without a
	// database.
	if _, err := store.ValidateName(pos[0]); err != nil {
		return fmt.Errorf("owners add: %w", err)
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	owner, key, err := svc.CreateOwner(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("owners add: %w", err)
	}
	zerolog.Ctx(ctx).Debug().Str("owner_id", owner.ID.String()).Msg("owner created")
	if *asJSON {
		return writeJSON(e.stdout, struct {
			OwnerID string `json:"owner_id"`
			Name    string `json:"name"`
			APIKey  string `json:"api_key"`
		}{owner.ID.String(), owner.Name, key})
	}
	fmt.Fprintf(e.stdout, "Created owner %q (id %s).\nAPI key: %s\n", owner.Name, owner.ID, key)
	warnKeyOnce(e, owner.ID.String())
	return nil
}

// warnKeyOnce tells the user to keep the key they were just shown.
func warnKeyOnce(e env, ownerID string) {
	cmd := "steward keys add"
	if e.remote != nil {
		cmd = "steward remote keys add"
	}
	fmt.Fprintf(e.stderr, "Save this API key now: it will not be shown again (only its hash is stored).\n"+
		"Send it as \"Authorization: Bearer <key>\". Lost it? %s --owner %s\n", cmd, ownerID)
}

func ownersList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("owners list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, ownersUsage, 0, 0); err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	owners, err := svc.ListOwners(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, owners)
	}
	if len(owners) == 0 {
		fmt.Fprintln(e.stdout, "No owners yet. Create one with: steward owners add NAME")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tMODE\tCREATED")
	for _, o := range owners {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.ID, o.Name, o.Mode, o.CreatedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

func ownersBudget(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("owners budget", flag.ContinueOnError)
	owner := ownerFlag(fs)
	messages := fs.String("messages", "", "chats a day (0 refuses every new turn)")
	cost := fs.String("cost-usd", "", "model cost a day in dollars, e.g. 0.25")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, ownersUsage, 0, 0); err != nil {
		return err
	}
	if owner.id == uuid.Nil {
		return usageError{msg: "--owner ID is required", usage: ownersUsage}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["messages"] && !set["cost-usd"] {
		return usageError{msg: "give --messages N, --cost-usd X, or both", usage: ownersUsage}
	}
	var msgLimit *int32
	var costLimit *int64
	if set["messages"] {
		n, err := strconv.ParseInt(*messages, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("owners budget: --messages must be a whole number from 0 to 2147483647, got %q", *messages)
		}
		m := int32(n)
		msgLimit = &m
	}
	if set["cost-usd"] {
		micros, err := steward.ParseDollars(*cost)
		if err != nil {
			return fmt.Errorf("owners budget: --cost-usd %w", err)
		}
		costLimit = &micros
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	got, err := svc.SetBudget(ctx, owner.id, msgLimit, costLimit)
	if err != nil {
		return fmt.Errorf("owners budget: %w", err)
	}
	if *asJSON {
		return writeJSON(e.stdout, struct {
			OwnerID         string  `json:"owner_id"`
			MessageLimit    int32   `json:"message_limit"`
			CostLimitUSD    float64 `json:"cost_limit_usd"`
			CostLimitMicros int64   `json:"cost_limit_micros"`
		}{owner.id.String(), got.Messages, float64(got.CostMicros) / 1e6, got.CostMicros})
	}
	plural := "s"
	if got.Messages == 1 {
		plural = ""
	}
	fmt.Fprintf(e.stdout, "Daily limits of owner %s: %d message%s a day, $%s a day (reset at midnight UTC).\n",
		owner.id, got.Messages, plural, formatMicros(got.CostMicros))
	return nil
}

// formatMicros prints millionths of a dollar exactly, with at least two decimals: 5000000 is
// "5.00", 4350000 "4.35", 1 "0.000001".
func formatMicros(micros int64) string {
	s := fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return s
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
