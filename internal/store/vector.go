package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoVector is returned when the server has no pgvector to install.
var ErrNoVector = errors.New("the vector extension is not available on this server: install pgvector ≥ 0.8")

// MinVector is the oldest pgvector Steward runs on (iterative index scans arrived in 0.8).
const MinVector = "0.8"

// VectorError explains a failure to create the vector extension in words an operator can act
// on; any other error is returned unchanged.
func VectorError(err error) error {
	if err == nil {
		return nil
	}
	notInstalled := errors.New("the vector extension is not installed in this database and only a superuser can install it: run steward migrate bootstrap")
	// pgvector-go, registering its types on a new connection to a database without them.
	if strings.Contains(err.Error(), "vector type not found in the database") {
		return notInstalled
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !strings.Contains(pgErr.Message, `extension "vector"`) {
		return err
	}
	switch pgErr.Code {
	case "0A000", "58P01": // feature_not_supported (PostgreSQL 15+), undefined_file (older)
		return ErrNoVector
	case "42501": // insufficient_privilege: pgvector is not a trusted extension
		return notInstalled
	}
	return err
}
