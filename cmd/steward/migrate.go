package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/stewardhq/steward/internal/admin"

	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/store"
)

const migrateUsage = `Usage:
  steward migrate bootstrap [--print]
  steward migrate up
  steward migrate status
  steward migrate down --yes
  steward migrate reset --yes

  bootstrap  as SUPERUSER_DATABASE_URL: create (or update) the roles steward_owner,
             steward_app and steward_door with the passwords in DATABASE_URL,
             APP_DATABASE_URL and DOOR_DATABASE_URL, create the database named in
             DATABASE_URL owned by steward_owner, install pgvector and set schema
             privileges. Idempotent. --print prints the SQL instead, with placeholder
             passwords, for operators who run it by hand (RDS/Aurora: as the master user).
  up         apply every pending migration, as DATABASE_URL (steward_owner)
  status     list migrations and whether each is applied
  down       roll back the latest migration (drops its tables and their data)
  reset      roll back every migration (drops every table and all data)
`

// openTimeout bounds how long a command waits to connect to the database.
const openTimeout = 15 * time.Second

func runMigrate(ctx context.Context, e env, cfg config.Config, args []string) error {
	return subcommand(ctx, e, cfg, args, migrateUsage, map[string]func(context.Context, env, config.Config, []string) error{
		"bootstrap": migrateBootstrap,
		"up":        migrateUp,
		"status":    migrateStatus,
		"down":      migrateDown("down"),
		"reset":     migrateDown("reset"),
	})
}

func migrateBootstrap(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("migrate bootstrap", flag.ContinueOnError)
	printSQL := fs.Bool("print", false, "print the SQL instead of running it")
	if _, err := parseFlags(fs, args, migrateUsage, 0, 0); err != nil {
		return err
	}
	if *printSQL {
		database := "steward"
		if c, err := pgx.ParseConfig(cfg.DatabaseURL); cfg.DatabaseURL != "" && err == nil && c.Database != "" {
			database = c.Database
		}
		fmt.Fprintf(e.stdout, `-- Steward bootstrap for database %q. Run with psql as a superuser (RDS/Aurora: the
-- master user). Replace <owner-password>, <app-password> and <door-password> with the
-- passwords of DATABASE_URL (steward_owner), APP_DATABASE_URL (steward_app) and
-- DOOR_DATABASE_URL (steward_door). Then: steward migrate up
`, database)
		fmt.Fprint(e.stdout, admin.BootstrapSQL(database, [3]string{"<owner-password>", "<app-password>", "<door-password>"}))
		return nil
	}
	if err := cfg.Require("SUPERUSER_DATABASE_URL", "DATABASE_URL", "APP_DATABASE_URL", "DOOR_DATABASE_URL"); err != nil {
		return err
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	vector, err := admin.VectorAvailable(octx, cfg.SuperuserDatabaseURL)
	cancel()
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	urls := admin.RoleURLs{Owner: cfg.DatabaseURL, App: cfg.AppDatabaseURL, Door: cfg.DoorDatabaseURL}
	if err := admin.Bootstrap(ctx, cfg.SuperuserDatabaseURL, urls); err != nil {
		return store.VectorError(err)
	}
	c, _ := pgx.ParseConfig(cfg.DatabaseURL) // valid: config.Load checked it
	zerolog.Ctx(ctx).Debug().Str("database", c.Database).Msg("bootstrapped")
	fmt.Fprintf(e.stdout, "Bootstrapped database %s: roles %s, %s and %s, pgvector %s available.\nNext: steward migrate up\n",
		c.Database, store.OwnerRole, store.AppRole, store.DoorRole, vector)
	return nil
}

// openMigrator connects as DATABASE_URL for migrations.
func openMigrator(ctx context.Context, cfg config.Config) (*admin.Migrator, error) {
	if err := cfg.Require("DATABASE_URL"); err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	m, err := admin.NewMigrator(octx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", store.VectorError(err))
	}
	return m, nil
}

func migrateUp(ctx context.Context, e env, cfg config.Config, args []string) error {
	if _, err := parseFlags(flag.NewFlagSet("migrate up", flag.ContinueOnError), args, migrateUsage, 0, 0); err != nil {
		return err
	}
	m, err := openMigrator(ctx, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(ctx, e.stdout); err != nil {
		return store.VectorError(err)
	}
	v, err := m.Version(ctx)
	if err != nil {
		return err
	}
	zerolog.Ctx(ctx).Debug().Int64("version", v).Msg("migrated up")
	fmt.Fprintf(e.stdout, "Schema at version %d.\n", v)
	if cfg.DailyCostCapMicros == nil {
		return nil
	}
	door, err := openDoor(ctx, cfg)
	if err != nil {
		return err
	}
	defer door.Close()
	if err := door.SetGlobalCostCap(ctx, *cfg.DailyCostCapMicros); err != nil {
		return fmt.Errorf("STEWARD_DAILY_COST_CAP_USD: %w", err)
	}
	fmt.Fprintf(e.stdout, "The deployment's daily cost cap is $%s (STEWARD_DAILY_COST_CAP_USD).\n", formatMicros(*cfg.DailyCostCapMicros))
	return nil
}

func migrateStatus(ctx context.Context, e env, cfg config.Config, args []string) error {
	if _, err := parseFlags(flag.NewFlagSet("migrate status", flag.ContinueOnError), args, migrateUsage, 0, 0); err != nil {
		return err
	}
	m, err := openMigrator(ctx, cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Status(ctx, e.stdout)
}

// migrateDown is `migrate down` (one step) or `migrate reset` (every step). Both destroy
// data, so both want --yes.
func migrateDown(which string) func(context.Context, env, config.Config, []string) error {
	return func(ctx context.Context, e env, cfg config.Config, args []string) error {
		fs := flag.NewFlagSet("migrate "+which, flag.ContinueOnError)
		yes := fs.Bool("yes", false, "confirm: this drops tables and their data")
		if _, err := parseFlags(fs, args, migrateUsage, 0, 0); err != nil {
			return err
		}
		if !*yes {
			return usageError{msg: fmt.Sprintf("migrate %s drops tables and all their data; run it again with --yes", which), usage: migrateUsage}
		}
		m, err := openMigrator(ctx, cfg)
		if err != nil {
			return err
		}
		defer m.Close()
		if which == "reset" {
			err = m.Reset(ctx, e.stdout)
		} else {
			err = m.Down(ctx, e.stdout)
		}
		if err != nil {
			return err
		}
		v, err := m.Version(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Schema at version %d.\n", v)
		return nil
	}
}
