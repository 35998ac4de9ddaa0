package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stewardhq/steward/db"
)

// Warm connections (docs/ARCHITECTURE.md §6). A new connection's PostgreSQL backend loads the
// catalog — tables, indexes, row-level security policies, types, functions — and parses and
// plans each statement at its first use: a chat on a new connection takes several times as
// long as on a warm one. A long-lived process's pool (WithWarmPool: steward serve) opens its
// connections in the background and, in pgx's default exec mode (cache_statement), prepares
// on each the statements of the turn loop and makes the plans of its reads as it opens
// (newPool's AfterConnect, warmUp), so no request pays for that.

// WithWarmPool returns dbURL with pgxpool's pool_min_conns set to n, unless it names its own:
// the pool then opens its connections in the background (at start and after each recycle)
// and warms each (newPool, warmUp). For a long-lived process; a Lambda
// container's pool stays lazy.
func WithWarmPool(dbURL string, n int32) (string, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return "", errors.New("malformed database url")
	}
	// pgx leaves the pool_ parameters it does not know in RuntimeParams (pgxpool reads them).
	if _, set := cfg.RuntimeParams["pool_min_conns"]; set || n < 1 {
		return dbURL, nil
	}
	return withParam(dbURL, "pool_min_conns", strconv.Itoa(int(n)))
}

// warmTimeout bounds warming a new connection.
const warmTimeout = 10 * time.Second

// hotSet is what a warm pool readies on each new connection: it prepares every statement of
// prepare, and runs those of run (reads among them) once.
type hotSet struct{ prepare, run []string }

// warmUp readies a new connection (docs/ARCHITECTURE.md §6). It prepares each statement under
// its own SQL text: pgx then runs a statement of that text — alone or in a batch
// (pipeline.go) — as this prepared statement, in every exec mode, so this is done only in
// cache_statement, which would prepare them at first use anyway; the other modes (behind RDS
// Proxy) must create no named prepared statement, and nothing is done there. Preparing
// parses and analyses a statement, which loads the catalog entries of its tables, types and
// row-level security policies into the backend. Then it runs the reads of hot.run once, with
// NULL arguments, in a read-only transaction it rolls back: each one's plan is made and kept
// (a generic plan, which a long-lived pool asks for: WithGenericPlans) — recall's, over every
// partition of memory_chunks, is the dearest. Warming is best effort: a statement that fails
// here stops it, and the connection is used all the same unless it broke.
func warmUp(ctx context.Context, conn *pgx.Conn, hot *hotSet) error {
	if conn.Config().DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, warmTimeout)
	defer cancel()
	params := make(map[string]int, len(hot.prepare))
	for _, sql := range hot.prepare {
		sd, err := conn.Prepare(ctx, sql, sql)
		if err != nil {
			return unlessBroken(conn, err)
		}
		params[sql] = len(sd.ParamOIDs)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return unlessBroken(conn, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a failed rollback breaks the connection, seen below
	for _, sql := range hot.run {
		if _, err := tx.Exec(ctx, sql, make([]any, params[sql])...); err != nil {
			break
		}
	}
	return unlessBroken(conn, tx.Rollback(ctx))
}

// unlessBroken is err when it left conn closed, else nil: a connection that could not be
// warmed is still a connection.
func unlessBroken(conn *pgx.Conn, err error) error {
	if err != nil && conn.IsClosed() {
		return fmt.Errorf("warm connection: %w", err)
	}
	return nil
}

// hotStatements are the statements a chat and a confirm send on the application pool (the
// turn loop's pipelined transactions, pipeline.go): the generated queries' SQL, read by
// calling each on a recorder (no SQL text is copied here), and the pipe's own. The reads
// are run as well.
func hotStatements() *hotSet {
	reads := record(func(ctx context.Context, q *db.Queries) {
		_, _ = q.NearestChunks(ctx, db.NearestChunksParams{}) // recall
		_, _ = q.MatchFacts(ctx, db.MatchFactsParams{})
		_, _ = q.GetConversation(ctx, db.GetConversationParams{})
		_, _ = q.ListMessages(ctx, db.ListMessagesParams{})
		_, _ = q.ListMCPTools(ctx, uuid.Nil)
		_, _ = q.AdmitState(ctx, uuid.Nil)
		_, _ = q.ControlState(ctx, uuid.Nil)
		_, _ = q.TurnCancelRequested(ctx, db.TurnCancelRequestedParams{})
		_, _ = q.RulesForTool(ctx, db.RulesForToolParams{})
		_, _ = q.GetChannel(ctx, uuid.Nil)
		_, _ = q.ListChannels(ctx, uuid.Nil)
		_, _ = q.GetTurn(ctx, db.GetTurnParams{})
		_, _ = q.ListToolCalls(ctx, db.ListToolCallsParams{})
	})
	// A chat creates its conversation and turn, journals the model's call and suspends; a
	// confirm claims the turn, runs the approved write, journals it and saves the completed
	// turn with its messages and the memory outbox's entry.
	writes := record(func(ctx context.Context, q *db.Queries) {
		_, _ = q.CreateConversation(ctx, db.CreateConversationParams{})
		_ = q.LockOwner(ctx, "")
		_, _ = q.CreateTurn(ctx, db.CreateTurnParams{})
		_ = q.InsertToolCall(ctx, db.InsertToolCallParams{})
		_, _ = q.AppendAuditBatch(ctx, db.AppendAuditBatchParams{})
		_, _ = q.ClaimTurn(ctx, db.ClaimTurnParams{})
		_, _ = q.MarkUnknownToolCalls(ctx, db.MarkUnknownToolCallsParams{})
		_, _ = q.UpdateToolCall(ctx, db.UpdateToolCallParams{})
		_, _ = q.CreateTask(ctx, db.CreateTaskParams{})
		_, _ = q.TouchConversation(ctx, db.TouchConversationParams{})
		_, _ = q.InsertMessages(ctx, db.InsertMessagesParams{})
		_ = q.EnqueueIngest(ctx, db.EnqueueIngestParams{})
	})
	writes = append(writes, record(func(ctx context.Context, q *db.Queries) {
		_, _ = q.SaveTurn(ctx, db.SaveTurnParams{}) // as Turns.Finish sends it
	}, "FinishTurn")...)
	prepare := append(append(reads, writes...), "BEGIN", setOwnerSQL, "COMMIT", savepointSQL, releaseSavepointSQL,
		groupSavepointSQL, releaseGroupSQL, householdFileSQL)
	return &hotSet{prepare: prepare, run: reads}
}

// record returns the SQL of the queries f runs, under the query name rename when one is given
// (as Turns.Finish renames SaveTurn).
func record(f func(context.Context, *db.Queries), rename ...string) []string {
	r := &recorder{}
	var tx db.DBTX = r
	if len(rename) > 0 {
		tx = renamed{DBTX: r, name: rename[0]}
	}
	f(context.Background(), db.New(tx))
	return r.sql
}

// errRecorded ends a query run on a recorder.
var errRecorded = errors.New("recorded, not run")

// recorder is a db.DBTX that records the SQL of each query run on it and runs none.
type recorder struct{ sql []string }

func (r *recorder) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	r.sql = append(r.sql, sql)
	return pgconn.CommandTag{}, errRecorded
}

func (r *recorder) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	r.sql = append(r.sql, sql)
	return nil, errRecorded
}

func (r *recorder) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	r.sql = append(r.sql, sql)
	return recordedRow{}
}

type recordedRow struct{}

func (recordedRow) Scan(...any) error { return errRecorded }
