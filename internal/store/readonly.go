package store

import (
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A database that accepts no writes (docs/ARCHITECTURE.md §6): a failover's old primary, a
// standby, a database set default_transaction_read_only (as for a full disk). Steward writes
// on every turn, so such a database is unavailable, like an unreachable one: 503 with
// Retry-After, never a 500. No session that began read-only is kept: a new connection to a
// read-only server is refused as it connects (newPool's AfterConnect), one that became
// read-only while pooled is closed when released (AfterRelease) or before it is handed out
// (PrepareConn). So once the database accepts writes again, the next request dials a session
// that can write; nothing needs a restart, nor its connections ended.

// ErrReadOnly: the database accepts no writes for now.
var ErrReadOnly = errors.New("the database is read-only (default_transaction_read_only is on, or it is a standby)")

// sessionReadOnly reports whether conn's session refuses writes. PostgreSQL (14 and later)
// reports default_transaction_read_only and in_hot_standby to the client at the start and
// whenever they change, so this costs no round trip.
func sessionReadOnly(conn *pgx.Conn) bool {
	c := conn.PgConn()
	return c.ParameterStatus("default_transaction_read_only") == "on" || c.ParameterStatus("in_hot_standby") == "on"
}

// isReadOnly reports whether err says the database accepts no writes: ErrReadOnly, or a
// write refused with SQLSTATE 25006 (read_only_sql_transaction).
func isReadOnly(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, ErrReadOnly) || (errors.As(err, &pgErr) && pgErr.Code == "25006")
}
