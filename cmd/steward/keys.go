package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

const keysUsage = `Usage:
  steward keys add --owner ID [--name NAME] [--json]
  steward keys list --owner ID [--json]
  steward keys revoke --owner ID KEY_ID

  add     create another API key for an owner; printed once, never shown again.
          --json prints {"key_id","owner_id","name","api_key"}.
  list    list an owner's keys (prefix and dates; never the keys themselves).
  revoke  revoke one of the owner's keys; requests with it are refused from now on.

All connect as DATABASE_URL (steward_owner). Owner ids: steward owners list.
`

func runKeys(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, keysUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"add":    keysAdd,
		"list":   keysList,
		"revoke": keysRevoke,
	})
}

// uuidFlag is a flag holding an id; a malformed id is a usage error.
type uuidFlag struct{ id uuid.UUID }

func (f *uuidFlag) String() string { return f.id.String() }

func (f *uuidFlag) Set(s string) error {
	id, err := uuid.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not an id", s)
	}
	f.id = id
	return nil
}

// ownerFlag adds the required --owner flag to fs.
func ownerFlag(fs *flag.FlagSet) *uuidFlag {
	f := &uuidFlag{}
	fs.Var(f, "owner", "owner id (steward owners list)")
	return f
}

func requireOwner(f *uuidFlag) error {
	if f.id == uuid.Nil {
		return usageError{msg: "--owner ID is required", usage: keysUsage}
	}
	return nil
}

func keysAdd(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("keys add", flag.ContinueOnError)
	owner := ownerFlag(fs)
	name := fs.String("name", "default", "a name for the key (where it is used)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, keysUsage, 0, 0); err != nil {
		return err
	}
	if err := requireOwner(owner); err != nil {
		return err
	}
	if _, err := store.ValidateName(*name); err != nil {
		return fmt.Errorf("keys add: key %w", err)
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	key, meta, err := svc.AddKey(ctx, owner.id, *name)
	if err != nil {
		return fmt.Errorf("keys add: %w", err)
	}
	zerolog.Ctx(ctx).Debug().Str("owner_id", meta.OwnerID.String()).Str("key_id", meta.ID.String()).Msg("api key created")
	if *asJSON {
		return writeJSON(e.stdout, struct {
			KeyID   string `json:"key_id"`
			OwnerID string `json:"owner_id"`
			Name    string `json:"name"`
			APIKey  string `json:"api_key"`
		}{meta.ID.String(), meta.OwnerID.String(), meta.Name, key})
	}
	fmt.Fprintf(e.stdout, "Created key %q (id %s) for owner %s.\nAPI key: %s\n", meta.Name, meta.ID, meta.OwnerID, key)
	warnKeyOnce(e, meta.OwnerID.String())
	return nil
}

func keysList(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("keys list", flag.ContinueOnError)
	owner := ownerFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args, keysUsage, 0, 0); err != nil {
		return err
	}
	if err := requireOwner(owner); err != nil {
		return err
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	keys, err := svc.ListKeys(ctx, owner.id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, keys)
	}
	if len(keys) == 0 {
		fmt.Fprintf(e.stdout, "Owner %s has no keys (or does not exist: steward owners list).\n", owner.id)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tCREATED\tLAST USED\tREVOKED")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix,
			k.CreatedAt.Local().Format(time.DateTime), optTime(k.LastUsedAt), optTime(k.RevokedAt))
	}
	return tw.Flush()
}

func optTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

func keysRevoke(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("keys revoke", flag.ContinueOnError)
	owner := ownerFlag(fs)
	pos, err := parseFlags(fs, args, keysUsage, 1, 1)
	if err != nil {
		return err
	}
	if err := requireOwner(owner); err != nil {
		return err
	}
	keyID, err := uuid.Parse(pos[0])
	if err != nil {
		return usageError{msg: fmt.Sprintf("KEY_ID %q is not an id", pos[0]), usage: keysUsage}
	}
	svc, done, err := operatorService(ctx, e, cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := svc.RevokeKey(ctx, owner.id, keyID); err != nil {
		return fmt.Errorf("keys revoke: %w (no such active key for owner %s)", err, owner.id)
	}
	zerolog.Ctx(ctx).Debug().Str("owner_id", owner.id.String()).Str("key_id", keyID.String()).Msg("api key revoked")
	fmt.Fprintf(e.stdout, "Revoked key %s.\n", keyID)
	return nil
}
