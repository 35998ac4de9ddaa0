// Package store is Steward's PostgreSQL adapter and the only importer of the generated db
// package. Owner data is reached through WithOwner, which runs a function in a transaction
// where app.owner_id is set, so row-level security confines it to one owner; every query also
// filters by owner_id explicitly. Cross-owner reads live in door.go alone.
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/agent"
)

// Errors returned by the store, matched with errors.Is.
var (
	// ErrNotFound: no such row for this owner (another owner's rows are never found).
	ErrNotFound = steward.ErrNotFound
	// ErrConflict: the row changed under us (a lost race, a duplicate, a stale version).
	ErrConflict = steward.ErrConflict
)

// Store is the application's connection pool, as the steward_app role under RLS.
type Store struct {
	pool *pgxpool.Pool
	url  string
	// holder names this process on the turns whose leases it takes (HoldAs); "" names none.
	holder string
}

// HoldAs names this process on the leases of the turns it runs from now on (sweep.Process:
// "host/pid/start" under `steward serve`), so that a later process of the same host can tell
// they were held by a process that is gone (migration 00050). Call it before serving.
func (s *Store) HoldAs(holder string) { s.holder = holder }

// URL is the connection string the store was opened with.
func (s *Store) URL() string { return s.url }

// Open connects to url (APP_DATABASE_URL) and checks the database answers.
func Open(ctx context.Context, url string, maxConns int32) (*Store, error) {
	s, err := OpenLazy(url, maxConns)
	if err != nil {
		return nil, err
	}
	if err := s.Connect(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenLazy is Open without connecting: a malformed url fails here, an unreachable database
// on Connect or on first use. A Lambda cold start connects while it builds the rest
// (internal/app).
func OpenLazy(url string, maxConns int32) (*Store, error) {
	pool, err := newPool(url, maxConns, hotStatements())
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, url: url}, nil
}

// Connect checks the database answers, naming the host, port and user when it does not.
func (s *Store) Connect(ctx context.Context) error { return ping(ctx, s.pool) }

// WithExecMode returns url with pgx's default_query_exec_mode set to mode
// (STEWARD_DB_EXEC_MODE: cache_statement, cache_describe or describe_exec); "" returns url as
// it is. Behind RDS Proxy, cache_describe prepares no named statement, which would pin the
// connection.
func WithExecMode(dbURL, mode string) (string, error) {
	if mode == "" {
		return dbURL, nil
	}
	return withParam(dbURL, "default_query_exec_mode", mode)
}

// WithGenericPlans returns dbURL with plan_cache_mode=force_generic_plan when its statements
// are named prepared statements (pgx's cache_statement, the default) and it names no
// plan_cache_mode of its own; otherwise dbURL as it is. Each prepared statement is then
// planned once per connection, and that generic plan runs every owner's statement: every
// one selects by owner and key, and row-level security reads app.owner_id when a plan
// runs. Without it PostgreSQL plans a statement on the partitioned memory_chunks (recall,
// the memory worker's dedup) again at every run, because it prices a generic plan over
// every partition though execution prunes to the owner's: 0.4 ms of planning for 0.05 ms
// of running. The first run on a connection plans every partition (20–40 ms for recall), so
// it pays back after some 60 recalls on one connection: a long-lived server's pool, not a
// Lambda container's. Unnamed statements (the other exec modes) are planned at every run,
// where a generic plan would plan every partition each time.
func WithGenericPlans(dbURL string) (string, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return "", errors.New("malformed database url")
	}
	if _, set := cfg.RuntimeParams["plan_cache_mode"]; set || cfg.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		return dbURL, nil
	}
	return withParam(dbURL, "plan_cache_mode", "force_generic_plan")
}

// withParam returns dbURL, in URL or keyword/value form, with key set to value.
func withParam(dbURL, key, value string) (string, error) {
	if !strings.Contains(dbURL, "://") { // keyword/value form
		return dbURL + " " + key + "=" + value, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", errors.New("malformed database url")
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// NewPool builds a pgx pool with the pgvector types and a direct google/uuid codec
// (uuidcodec.go) registered on every connection, and checks the database answers.
func NewPool(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := newPool(url, maxConns, nil)
	if err != nil {
		return nil, err
	}
	if err := ping(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// newPool is NewPool without connecting (pgxpool connects on first use). A pool that keeps
// connections (pool_min_conns, WithWarmPool) warms each new one with hot (warm.go), and
// recycles them one at a time rather than all together an hour after its start.
func newPool(url string, maxConns int32, hot *hotSet) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// An unreachable database fails a request in seconds (503, lost.go), not after the
		// kernel's TCP timeout; a URL's connect_timeout sets another bound.
		cfg.ConnConfig.ConnectTimeout = ConnectTimeout
	}
	// A connection idle for a moment is used without a ping (pgxpool pings one idle over 1 s
	// by default: a round trip on the hot path); only one idle longer than pingIdle is
	// checked first (docs/ARCHITECTURE.md §6).
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool { return p.IdleDuration > pingIdle }
	cfg.MinConns = min(cfg.MinConns, cfg.MaxConns)
	warm := cfg.MinConns > 0 && hot != nil
	if warm {
		cfg.MaxConnLifetimeJitter = cfg.MaxConnLifetime / 5
	}
	// A session that cannot write is never pooled (readonly.go).
	cfg.PrepareConn = func(_ context.Context, conn *pgx.Conn) (bool, error) { return !sessionReadOnly(conn), nil }
	cfg.AfterRelease = func(conn *pgx.Conn) bool { return !sessionReadOnly(conn) }
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if sessionReadOnly(conn) {
			return ErrReadOnly
		}
		registerUUID(conn.TypeMap())
		if err := pgxvec.RegisterTypes(ctx, conn); err != nil || !warm {
			return err
		}
		return warmUp(ctx, conn, hot)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

// ping checks pool's database answers, naming the host, port and user when it does not.
func ping(ctx context.Context, pool *pgxpool.Pool) error {
	if err := pool.Ping(ctx); err != nil {
		c := pool.Config().ConnConfig
		return fmt.Errorf("connect to %s:%d as %s: %w", c.Host, c.Port, c.User, err)
	}
	return nil
}

// ConnectTimeout bounds a new connection to the database unless its URL sets connect_timeout.
const ConnectTimeout = 5 * time.Second

// pingIdle is how long a pooled connection may sit idle before it is pinged on acquire.
const pingIdle = 30 * time.Second

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// CheckRuntime fails if the store's role could undo the database's protections (a
// superuser, BYPASSRLS, an owner of the tables): the runtime calls it before serving.
func (s *Store) CheckRuntime(ctx context.Context) error { return runtimeCheck(ctx, s.pool) }

// Ping checks the database is reachable, once more on a fresh connection when the pooled
// one it tried was dead (lost.go).
func (s *Store) Ping(ctx context.Context) error {
	err := s.pool.Ping(ctx)
	if err != nil && retryable(ctx, s.pool, err) {
		err = s.pool.Ping(ctx)
	}
	return unavailable(err)
}

// conn is one owner's open transaction, shared by the area repositories below.
type conn struct {
	q       *db.Queries
	tx      db.DBTX
	ownerID uuid.UUID
	// holder is the Store's (HoldAs): written with every lease a turn takes.
	holder string
	// control is the gate's state (kill switches and mode) read once per pipelined
	// transaction: the loop's kill-switch check and the gate's guards and mode share one
	// read (docs/ARCHITECTURE.md §6); nil until read, and in other transactions.
	control *db.ControlStateRow
	// notifiable is whether the owner has an enabled default channel, as the gate's
	// ControlState read it in this pipelined transaction (Links.Notifiable); nil until then,
	// after a channel write, and when the control state came from admission.
	notifiable *bool
	// votes are the household votes on one turn read in a pipelined transaction
	// (Household.Votes), until it writes one; nil otherwise.
	votes     map[uuid.UUID][]steward.HouseholdVote
	pipelined bool
}

// The area repositories of one owner transaction (docs/ARCHITECTURE.md §6). Each is a
// small value over the same transaction; consumers declare the narrow interface they use.
type (
	Turns         struct{ *conn } // turns: create, claim, save, cancel
	Sweep         struct{ *conn } // the sweep's turn upkeep: expire the suspended, fail the stale
	Journal       struct{ *conn } // the call journal and the audit events
	Conversations struct{ *conn } // conversations and their messages
	Safety        struct{ *conn } // kill switch, gate mode, budgets, money caps and spend
	Rules         struct{ *conn } // standing allow/deny rules
	Memory        struct{ *conn } // memory chunks and their embeddings
	Outbox        struct{ *conn } // the memory ingestion outbox
	Tasks         struct{ *conn } // the owner's tasks, facts and notifications (tools.Data)
	Schedules     struct{ *conn } // scheduled jobs
	Runs          struct{ *conn } // job runs (schedules and webhooks)
	Webhooks      struct{ *conn } // webhook endpoints and their events
	Channels      struct{ *conn } // the owner's notification channels (internal/channel)
	Deliveries    struct{ *conn } // webhook deliveries and the notifications' delivery queue
	Account       struct{ *conn } // the owner row and its API keys
	Sessions      struct{ *conn } // the web app's sessions (sign-in, sign-out, revocation)
	Ledger        struct{ *conn } // the double-entry ledger: accounts, transactions, budgets
	Documents     struct{ *conn } // the owner's documents (their chunks are memory chunks)
	MCPServers    struct{ *conn } // remote MCP servers and their approved tools
	Skills        struct{ *conn } // the owner's skills and their uses (§16)
	SkillSettings struct{ *conn } // the owner's switches of the built-in skills
)

// Tx is one owner's transaction: every repository reads and writes that owner's rows only.
type Tx struct {
	*conn
	Turns         Turns
	Sweep         Sweep
	Journal       Journal
	Conversations Conversations
	Safety        Safety
	Rules         Rules
	Memory        Memory
	Outbox        Outbox
	Tasks         Tasks
	Schedules     Schedules
	Runs          Runs
	Webhooks      Webhooks
	Channels      Channels
	Deliveries    Deliveries
	Account       Account
	Sessions      Sessions
	Ledger        Ledger
	Documents     Documents
	MCPServers    MCPServers
	Links         Links
	Household     Household
	Passkeys      Passkeys
	DeviceLinks   DeviceLinks
	Accounts      Accounts
	Voice         Voice
	ModelCalls    ModelCalls
	Skills        Skills
	SkillSettings SkillSettings
	Telegram      Telegram
	Trading       Trading
	TradeOrders   TradeOrders
	Prices        Prices
	Work          Work
}

func newTx(c *conn) *Tx {
	return &Tx{conn: c, Turns: Turns{c}, Sweep: Sweep{c}, Journal: Journal{c}, Conversations: Conversations{c},
		Safety: Safety{c}, Rules: Rules{c}, Memory: Memory{c}, Outbox: Outbox{c}, Tasks: Tasks{c},
		Schedules: Schedules{c}, Runs: Runs{c}, Webhooks: Webhooks{c}, Channels: Channels{c}, Deliveries: Deliveries{c},
		Account: Account{c}, Sessions: Sessions{c}, Ledger: Ledger{c}, Documents: Documents{c}, MCPServers: MCPServers{c}, Links: Links{c},
		Household: Household{c}, Passkeys: Passkeys{c}, DeviceLinks: DeviceLinks{c}, Accounts: Accounts{c}, Voice: Voice{c}, ModelCalls: ModelCalls{c}, Skills: Skills{c}, SkillSettings: SkillSettings{c},
		Telegram: Telegram{c}, Trading: Trading{c}, TradeOrders: TradeOrders{c}, Prices: Prices{c}, Work: Work{c}}
}

// OwnerID is the owner this transaction is confined to.
func (t *Tx) OwnerID() uuid.UUID { return t.ownerID }

// WithOwner runs fn in a transaction confined to ownerID: app.owner_id is set
// transaction-locally (safe under pooling) so row-level security applies, and
// hnsw.iterative_scan is enabled so filtered vector searches still return k rows.
// fn's error rolls the transaction back; otherwise it commits.
func (s *Store) WithOwner(ctx context.Context, ownerID uuid.UUID, fn func(*Tx) error) error {
	if ownerID == uuid.Nil {
		return errors.New("with owner: no owner id")
	}
	// BEGIN and the settings go in one round trip (one simple-protocol query): a uuid's text
	// form is hex digits and dashes only, so it is safe as a literal (docs/ARCHITECTURE.md §6).
	return inTx(ctx, s.pool, pgx.TxOptions{BeginQuery: beginOwnerSQL(ownerID)}, func(tx pgx.Tx) error {
		return fn(newTx(&conn{q: db.New(tx), tx: tx, ownerID: ownerID, holder: s.holder}))
	})
}

// RecallEfSearch is hnsw.ef_search in every owner transaction: the candidate list of an HNSW
// search (pgvector's default is 40). make bench-recall measures it: at 100,000 chunks of
// one owner, recall@10 ≥ 0.95 against an exact search (docs/PERFORMANCE.md).
const RecallEfSearch = 40

// ownerSettings follow app.owner_id in every owner transaction, transaction-locally: the
// HNSW scan mode and candidate list.
var ownerSettings = "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', '" + strconv.Itoa(RecallEfSearch) + "', true)"

// beginOwnerSQL begins an owner's transaction and sets app.owner_id and ownerSettings, in
// one statement list.
func beginOwnerSQL(ownerID uuid.UUID) string {
	return "BEGIN; SELECT set_config('app.owner_id', '" + ownerID.String() + "', true), " + ownerSettings
}

// InOwner is WithOwner for the agent: it implements agent.Store with the agent's ports.
// Its transaction is pipelined (pipeline.go): the loop's journal, audit and message writes
// travel with the next statement or with COMMIT.
func (s *Store) InOwner(ctx context.Context, ownerID uuid.UUID, fn func(agent.Tx) error) error {
	if ownerID == uuid.Nil {
		return errors.New("with owner: no owner id")
	}
	return s.inOwnerPipelined(ctx, ownerID, func(tx *Tx) error { return fn(tx.Agent()) })
}

// WithOwnerPipelined is WithOwner on the turn loop's pipelined transaction (pipeline.go):
// BEGIN and the owner's settings travel with the first statement, deferrable writes with the
// next one or with COMMIT. For the hot path's short reads (the owner's MCP tools).
func (s *Store) WithOwnerPipelined(ctx context.Context, ownerID uuid.UUID, fn func(*Tx) error) error {
	if ownerID == uuid.Nil {
		return errors.New("with owner: no owner id")
	}
	return s.inOwnerPipelined(ctx, ownerID, fn)
}

// Agent is this transaction as the turn loop's ports.
func (t *Tx) Agent() agent.Tx {
	return agent.Tx{Turns: t.Turns, Journal: t.Journal, Conversations: t.Conversations,
		Safety: t.Safety, Rules: t.Rules, Data: t.Tasks, Ledger: t.Ledger, Links: t.Links,
		Household: t.Household, Memory: t.Memory, MCP: t.MCPServers, Work: t.Work, Try: t.try, Together: t.Together}
}

// The savepoint of try; sqlc-style names, so a pipelined transaction defers them
// (pipeline.go): they cost no round trip of their own.
const (
	savepointSQL        = "-- name: Savepoint :exec\nSAVEPOINT steward_try"
	releaseSavepointSQL = "-- name: ReleaseSavepoint :exec\nRELEASE SAVEPOINT steward_try"
	rollbackToSQL       = "ROLLBACK TO SAVEPOINT steward_try"
)

// try runs fn, whose statements may fail without failing the transaction: they run under a
// savepoint, and when fn fails the transaction is rolled back to it and goes on. For
// optional reads (a turn's memory recall and its owner's MCP tools, docs/ARCHITECTURE.md §2).
// If rolling back to the savepoint fails too (a deferred write that went with fn's
// statements failed, so the savepoint never was), the error says so and the transaction
// stays failed: its next statement, or COMMIT, fails. Not nested.
//
// In a group's rounds (Tx.Together) fn sets no savepoint of its own: the group's stands for
// it. A statement of the group's batch that fails rolls the group back to that savepoint,
// and its fns run again one at a time, each try then under its own; a fn whose statements
// all succeeded and that fails anyway (its rows did not decode) leaves its reads behind, as
// rolling back to its savepoint would have done for reads.
func (t *Tx) try(ctx context.Context, fn func() error) error {
	if p, ok := t.tx.(*pipe); ok && p.g != nil {
		p.g.save = true
		return fn()
	}
	if _, err := t.tx.Exec(ctx, savepointSQL); err != nil {
		return fmt.Errorf("try: %w", err)
	}
	if err := fn(); err != nil {
		if errors.Is(err, errNotYet) { // fn runs again with its result (together.go)
			return err
		}
		if _, rerr := t.tx.Exec(context.WithoutCancel(ctx), rollbackToSQL); rerr != nil {
			return fmt.Errorf("%w (and the transaction failed: %w)", err, rerr)
		}
		return err
	}
	if _, err := t.tx.Exec(ctx, releaseSavepointSQL); err != nil {
		return fmt.Errorf("try: %w", err)
	}
	return nil
}

var _ agent.Store = (*Store)(nil)

// notFound maps pgx.ErrNoRows to ErrNotFound and wraps everything else with what failed.
func notFound(what string, err error) error {
	if err == errNotYet { // a group's statement whose result comes with its round (together.go)
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code == "23505" {
			return fmt.Errorf("%s: %w", what, ErrConflict)
		}
		if why, ok := refusedValue[pgErr.Code]; ok {
			// A client's value the schema refuses: a 4xx naming the operation and the kind of
			// value, never the SQL (the detail stays in the wrapped chain for the log).
			return fmt.Errorf("%w (%w)", steward.Errorf(steward.CodeInvalid, "%s: %s", what, why), err)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// refusedValue maps the SQLSTATEs of values PostgreSQL refuses to what a client is told.
var refusedValue = map[string]string{
	"23514": "a value is not allowed (it breaks a check on its field)",
	"22021": "a text value contains a NUL character or bytes that are not UTF-8",
	"22P05": "a JSON value contains a NUL character (\\u0000), which cannot be stored",
	"22001": "a value is longer than its field allows",
}

// rowsOrNotFound turns "0 rows affected" into ErrNotFound.
func rowsOrNotFound(what string, n int64, err error) error {
	if err != nil {
		return notFound(what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// nullUUID converts an optional id.
func nullUUID(id *uuid.UUID) uuid.NullUUID {
	if id == nil || *id == uuid.Nil {
		return uuid.NullUUID{}
	}
	return uuid.NullUUID{UUID: *id, Valid: true}
}

// ptrUUID converts back.
func ptrUUID(n uuid.NullUUID) *uuid.UUID {
	if !n.Valid {
		return nil
	}
	id := n.UUID
	return &id
}

// ptrString returns nil for "".
func ptrString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// str dereferences an optional string.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
