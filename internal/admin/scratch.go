package admin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/store"
)

// CreateDatabase creates the database name on superURL's server, owned by steward_owner,
// prepared as Bootstrap prepares one (pgvector, privileges) and migrated to the latest
// migration as ownerURL's role. The roles must exist (Bootstrap). Tests build their template
// with it; steward eval its scratch database.
func CreateDatabase(ctx context.Context, superURL, ownerURL, name string) error {
	su, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return fmt.Errorf("connect as SUPERUSER_DATABASE_URL: %w", err)
	}
	defer su.Close(ctx)
	var super bool
	if err := su.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil {
		return err
	}
	if !super {
		// RDS/Aurora: the master user may create a database for another role only as a
		// member of it.
		if _, err := su.Exec(ctx, "GRANT "+store.OwnerRole+" TO CURRENT_USER"); err != nil {
			return err
		}
	}
	if _, err := su.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{name}.Sanitize(), store.OwnerRole)); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	if err := PrepareDatabase(ctx, superURL, name); err != nil {
		return err
	}
	owner, err := OnDatabase(ownerURL, name)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err)
	}
	m, err := NewMigrator(ctx, owner)
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Up(ctx, io.Discard)
}

// DropDatabase drops the database name on superURL's server, closing its connections.
func DropDatabase(ctx context.Context, superURL, name string) error {
	su, err := pgx.Connect(ctx, superURL)
	if err != nil {
		return fmt.Errorf("connect as SUPERUSER_DATABASE_URL: %w", err)
	}
	defer su.Close(ctx)
	if _, err := su.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Scratch is a database made for one run and dropped after it (steward eval): the three
// roles' URLs point at it.
type Scratch struct {
	Name string
	URLs RoleURLs
}

// CreateScratch creates and migrates a database named prefix_<random> next to urls' own
// (CreateDatabase), as superURL. Drop it with DropDatabase(ctx, superURL, s.Name).
func CreateScratch(ctx context.Context, superURL string, urls RoleURLs, prefix string) (Scratch, error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	s := Scratch{Name: prefix + "_" + hex.EncodeToString(b)}
	var err error
	for _, u := range []struct {
		from     string
		to       *string
		variable string
	}{{urls.Owner, &s.URLs.Owner, "DATABASE_URL"}, {urls.App, &s.URLs.App, "APP_DATABASE_URL"}, {urls.Door, &s.URLs.Door, "DOOR_DATABASE_URL"}} {
		if *u.to, err = OnDatabase(u.from, s.Name); err != nil {
			return Scratch{}, fmt.Errorf("%s: %w", u.variable, err)
		}
	}
	if err := CreateDatabase(ctx, superURL, urls.Owner, s.Name); err != nil {
		_ = DropDatabase(context.WithoutCancel(ctx), superURL, s.Name)
		return Scratch{}, err
	}
	return s, nil
}

// OnDatabase is rawURL (a postgres URL or key=value string) for another database on the same
// server, as the same role.
func OnDatabase(rawURL, database string) (string, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(cfg.User, cfg.Password),
		Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + database, RawQuery: "sslmode=disable"}
	if cfg.TLSConfig != nil {
		u.RawQuery = "sslmode=require"
	}
	return u.String(), nil
}
