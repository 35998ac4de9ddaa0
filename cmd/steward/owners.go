package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

const ownersUsage = `Usage:
  steward owners add NAME [--json]
  steward owners list [--json]

  add   create an owner and its first API key. The key is printed once and cannot be
        shown again (only its hash is stored). --json prints {"owner_id","name","api_key"}.
  list  list every owner.

Both connect as DATABASE_URL (steward_owner).
`

func runOwners(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, ownersUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add":  ownersAdd,
		"list": ownersList,
	})
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
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return err
	}
	defer door.Close()
	owner, key, err := door.CreateOwner(ctx, pos[0])
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
	warnKeyOnce(e.stderr, owner.ID.String())
	return nil
}

// warnKeyOnce tells the user to keep the key they were just shown.
func warnKeyOnce(w io.Writer, ownerID string) {
	fmt.Fprintf(w, "Save this API key now: it will not be shown again (only its hash is stored).\n"+
		"Send it as \"Authorization: Bearer <key>\". Lost it? steward keys add --owner %s\n", ownerID)
}

func ownersList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("owners list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, ownersUsage, 0, 0); err != nil {
		return err
	}
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return err
	}
	defer door.Close()
	owners, err := door.ListOwners(ctx)
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

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
