package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Database is how Steward reaches PostgreSQL: one URL per role, the runtime pool's size and
// statement mode, and on Lambda where the runtime roles' URLs are kept.
type Database struct {
	// DatabaseURL connects as steward_owner, the owner of every table: migrations and the
	// admin CLI (DATABASE_URL). The runtime never uses it.
	DatabaseURL string
	// AppDatabaseURL connects as steward_app, under row-level security (APP_DATABASE_URL).
	AppDatabaseURL string
	// DoorDatabaseURL connects as steward_door, the runtime's read-only door across owners
	// (DOOR_DATABASE_URL).
	DoorDatabaseURL string
	// SuperuserDatabaseURL is used only by `steward migrate bootstrap` and tests.
	SuperuserDatabaseURL string
	// DBMaxConns caps the application pool (STEWARD_DB_MAX_CONNS).
	DBMaxConns int32
	// DBExecMode is how the runtime's pools send statements (STEWARD_DB_EXEC_MODE): one of
	// DBExecModes, or "" for pgx's default (cache_statement, or the URL's
	// default_query_exec_mode).
	DBExecMode string
	// Where the runtime's database URLs are, read once at cold start on Lambda instead of
	// plain environment values: an SSM parameter name (SecureString) or a Secrets Manager
	// secret's ARN (APP_DATABASE_URL_SSM, DOOR_DATABASE_URL_SSM). A secret may hold JSON
	// (DatabaseSecret). The functions are given none for DATABASE_URL: the runtime never
	// holds steward_owner's credentials.
	AppDatabaseURLParam, DoorDatabaseURLParam string
	// The migrate function's secrets (docs/ARCHITECTURE.md §14), by the same kind of
	// reference: SUPERUSER_DATABASE_URL_SSM, the administrator's URL (a secret of JSON
	// {"username","password"} fills the user and password into SUPERUSER_DATABASE_URL), and
	// DATABASE_URL_SSM, steward_owner's secret.
	SuperuserDatabaseURLParam, DatabaseURLParam string
	// DBProxyHost is host[:port] the runtime roles connect through instead of the
	// administrator's URL's host, RDS Proxy (STEWARD_DB_PROXY_HOST): the migrate function
	// writes it into the URLs it stores for steward_app and steward_door.
	DBProxyHost string
}

// DBExecModes are the values of STEWARD_DB_EXEC_MODE: pgx's query exec modes that learn the
// parameters' types from the server. Behind RDS Proxy, cache_describe and describe_exec prepare only unnamed
// statements (a named prepared statement pins the connection). pgx's exec and
// simple_protocol modes are not offered: they guess types from Go values and would send
// Steward's JSON ([]byte) as bytea.
var DBExecModes = []string{"cache_statement", "cache_describe", "describe_exec"}

// database reads the Database area.
func (r *reader) database() Database {
	return Database{
		DatabaseURL:               r.dbURL("DATABASE_URL"),
		AppDatabaseURL:            r.dbURL("APP_DATABASE_URL"),
		DoorDatabaseURL:           r.dbURL("DOOR_DATABASE_URL"),
		SuperuserDatabaseURL:      r.dbURL("SUPERUSER_DATABASE_URL"),
		DBMaxConns:                int32(r.intIn("STEWARD_DB_MAX_CONNS", 10, 1, 1000)),
		DBExecMode:                r.oneOf("STEWARD_DB_EXEC_MODE", "", append([]string{""}, DBExecModes...)...),
		AppDatabaseURLParam:       r.str("APP_DATABASE_URL_SSM", ""),
		DoorDatabaseURLParam:      r.str("DOOR_DATABASE_URL_SSM", ""),
		SuperuserDatabaseURLParam: r.str("SUPERUSER_DATABASE_URL_SSM", ""),
		DatabaseURLParam:          r.str("DATABASE_URL_SSM", ""),
		DBProxyHost:               r.str("STEWARD_DB_PROXY_HOST", ""),
	}
}

func (r *reader) dbURL(name string) string {
	v := r.str(name, "")
	if v == "" {
		return ""
	}
	if _, err := pgx.ParseConfig(v); err != nil {
		// Never echo a database URL: it may hold a password.
		r.errs = append(r.errs, fmt.Errorf("%s is malformed: want postgres://user:password@host:port/database", name))
	}
	return v
}

// DatabaseSecret is the database URL a secret's value gives: the value itself when it is a
// URL; a JSON object's "url"; or, for a JSON object of "username" and "password" only (the
// shape of an RDS master secret, and of a role's secret before a deploy stored its URL),
// plain with that user and password. The error names variable, never a value.
func DatabaseSecret(variable, plain, value string) (string, error) {
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, "{") {
		return value, nil
	}
	var s struct{ URL, Username, Password string }
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return "", fmt.Errorf("the secret of %s is JSON that does not parse: %w", variable, err)
	}
	if s.URL != "" {
		return s.URL, nil
	}
	if s.Username == "" || s.Password == "" {
		return "", fmt.Errorf(`the secret of %s holds neither "url" nor "username" and "password"`, variable)
	}
	if plain == "" {
		return "", fmt.Errorf(`the secret of %s holds a user and password but no "url", and %s (its host and database) is not set: deploy again, and the migrate function stores the URL`, variable, variable)
	}
	u, err := url.Parse(plain)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("%s is not a postgres:// URL to put the secret's user and password in", variable)
	}
	u.User = url.UserPassword(s.Username, s.Password)
	return u.String(), nil
}
