package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/auth"
)

// Door is the one door for reads across owners: API-key lookup, the scheduler's scans,
// webhook routing, the memory worker's queue, the deployment's daily cost, and owner
// administration. The runtime (`steward serve`, the Lambda functions) opens it as
// steward_door (DOOR_DATABASE_URL), which owns nothing and only reads, through the reviewed
// "door" policies and the columns granted in migrations/00008_door_role.sql; its writes
// (CreateOwner, AddKey, RevokeKey, the kill switches and limits) are refused there. The
// admin CLI opens it as steward_owner (DATABASE_URL), through the "directory" policies. Only
// cmd/steward and internal/app may open it (see door_test.go).
type Door struct {
	pool *pgxpool.Pool
}

// OpenDoor connects to url: DOOR_DATABASE_URL (steward_door) for the runtime, DATABASE_URL
// (steward_owner) for the admin CLI.
func OpenDoor(ctx context.Context, url string) (*Door, error) {
	pool, err := NewPool(ctx, url, 4)
	if err != nil {
		return nil, err
	}
	return &Door{pool: pool}, nil
}

// OpenDoorLazy is OpenDoor without connecting: a malformed url fails here, an unreachable
// database on Connect or on first use.
func OpenDoorLazy(url string) (*Door, error) {
	pool, err := newPool(url, 4, nil)
	if err != nil {
		return nil, err
	}
	return &Door{pool: pool}, nil
}

// Connect checks the database answers, naming the host, port and user when it does not.
func (d *Door) Connect(ctx context.Context) error { return ping(ctx, d.pool) }

// CheckRuntime fails if the door's role could undo the database's protections (a superuser,
// BYPASSRLS, an owner of the tables): the runtime calls it before serving.
func (d *Door) CheckRuntime(ctx context.Context) error { return runtimeCheck(ctx, d.pool) }

// Close closes the pool.
func (d *Door) Close() { d.pool.Close() }

// Owner is a person (or team) whose data Steward keeps apart from everyone else's.
type Owner struct {
	ID        uuid.UUID `json:"owner_id"`
	Name      string    `json:"name"`
	Mode      string    `json:"mode"`
	CreatedAt time.Time `json:"created_at"`
}

// APIKey describes a key; the key itself is shown once at creation and never stored.
type APIKey struct {
	ID         uuid.UUID  `json:"id"`
	OwnerID    uuid.UUID  `json:"owner_id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// Principal is who an API key authenticates.
type Principal struct {
	OwnerID   uuid.UUID
	OwnerName string
	KeyID     uuid.UUID
}

// MaxNameLen is the longest owner or key name accepted.
const MaxNameLen = 100

// ValidateName checks an owner or key name: 1..MaxNameLen characters after trimming.
func ValidateName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "", fmt.Errorf("name is empty")
	case n > MaxNameLen:
		return "", fmt.Errorf("name is %d characters long; the limit is %d", n, MaxNameLen)
	}
	return name, nil
}

// CreateOwner creates an owner and its first API key, returning the key in clear (once).
func (d *Door) CreateOwner(ctx context.Context, name string) (Owner, string, error) {
	name, err := ValidateName(name)
	if err != nil {
		return Owner{}, "", err
	}
	var owner Owner
	var key string
	err = inTx(ctx, d.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		row, err := db.New(tx).CreateOwner(ctx, name)
		if err != nil {
			return notFound("create owner", err)
		}
		owner = toOwner(row)
		key, _, err = createKey(ctx, tx, owner.ID, "default")
		return err
	})
	return owner, key, err
}

// ListOwners lists every owner.
func (d *Door) ListOwners(ctx context.Context) ([]Owner, error) {
	rows, err := db.New(d.conn()).ListOwners(ctx)
	if err != nil {
		return nil, fmt.Errorf("list owners: %w", err)
	}
	owners := make([]Owner, len(rows))
	for i, r := range rows {
		owners[i] = toOwner(r)
	}
	return owners, nil
}

// AddKey creates another API key for an owner.
func (d *Door) AddKey(ctx context.Context, ownerID uuid.UUID, name string) (string, APIKey, error) {
	name, err := ValidateName(name)
	if err != nil {
		return "", APIKey{}, err
	}
	var key string
	var meta APIKey
	err = inTx(ctx, d.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := db.New(tx).GetOwner(ctx, ownerID); err != nil {
			return notFound("owner "+ownerID.String(), err)
		}
		key, meta, err = createKey(ctx, tx, ownerID, name)
		return err
	})
	return key, meta, err
}

// RevokeKey revokes an owner's key.
func (d *Door) RevokeKey(ctx context.Context, ownerID, keyID uuid.UUID) error {
	n, err := db.New(d.conn()).RevokeAPIKey(ctx, db.RevokeAPIKeyParams{OwnerID: ownerID, ID: keyID})
	return rowsOrNotFound("revoke key "+keyID.String(), n, err)
}

// ListKeys lists an owner's keys (never the keys themselves).
func (d *Door) ListKeys(ctx context.Context, ownerID uuid.UUID) ([]APIKey, error) {
	rows, err := db.New(d.conn()).ListAPIKeys(ctx, ownerID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	keys := make([]APIKey, len(rows))
	for i, r := range rows {
		keys[i] = APIKey(r)
	}
	return keys, nil
}

// Authenticate finds the owner of an API key; an unknown or revoked key is ErrNotFound.
func (d *Door) Authenticate(ctx context.Context, key string) (Principal, error) {
	if !auth.Plausible(key) {
		return Principal{}, fmt.Errorf("authenticate: %w", ErrNotFound)
	}
	row, err := db.New(d.conn()).LookupAPIKey(ctx, auth.Hash(key))
	if err != nil {
		return Principal{}, notFound("authenticate", err)
	}
	return Principal{OwnerID: row.OwnerID, OwnerName: row.OwnerName, KeyID: row.ID}, nil
}

// createKey mints a random key (internal/auth) and stores only its hash.
func createKey(ctx context.Context, tx pgx.Tx, ownerID uuid.UUID, name string) (string, APIKey, error) {
	key, err := auth.NewKey()
	if err != nil {
		return "", APIKey{}, err
	}
	row, err := db.New(tx).CreateAPIKey(ctx, db.CreateAPIKeyParams{
		OwnerID: ownerID, Name: name, Prefix: auth.Display(key), Hash: auth.Hash(key),
	})
	if err != nil {
		return "", APIKey{}, notFound("create key", err)
	}
	return key, APIKey(row), nil
}

func toOwner(r db.Owner) Owner {
	return Owner{ID: r.ID, Name: r.Name, Mode: r.Mode, CreatedAt: r.CreatedAt}
}

// GlobalCostToday is the deployment's estimated model cost since midnight UTC, across every
// owner, and its daily cap (millionths of a dollar).
func (d *Door) GlobalCostToday(ctx context.Context) (spent, limit int64, err error) {
	r, err := db.New(d.conn()).GlobalCostToday(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("global cost today: %w", err)
	}
	return r.CostMicros, r.CapMicros, nil
}

// SetGlobalKill engages (with a reason) or releases the deployment-wide kill switch.
func (d *Door) SetGlobalKill(ctx context.Context, engaged bool, reason string) error {
	var at *time.Time
	if engaged {
		now := time.Now()
		at = &now
	}
	if err := db.New(d.conn()).SetGlobalKill(ctx, db.SetGlobalKillParams{KilledAt: at, KillReason: reason}); err != nil {
		return fmt.Errorf("set global kill switch: %w", err)
	}
	return nil
}

// SetGlobalCostCap sets the deployment's daily cost cap.
func (d *Door) SetGlobalCostCap(ctx context.Context, capMicros int64) error {
	if err := db.New(d.conn()).SetGlobalCostCap(ctx, capMicros); err != nil {
		return fmt.Errorf("set global cost cap: %w", err)
	}
	return nil
}

// SetDailyLimits sets an owner's daily message quota and cost budget (an operator's choice,
// not the owner's: the app role cannot change them).
func (d *Door) SetDailyLimits(ctx context.Context, ownerID uuid.UUID, messages int, costMicros int64) error {
	m := int32(messages)
	_, err := d.UpdateDailyLimits(ctx, ownerID, &m, &costMicros)
	return err
}

// DailyLimits are an owner's daily message quota and cost budget (millionths of a dollar).
// There is no "unlimited": budgets fail closed, and 0 refuses every new turn.
type DailyLimits struct {
	Messages   int32
	CostMicros int64
}

// UpdateDailyLimits changes the limits given (nil keeps one) and returns both as they now
// are. The database refuses a negative limit.
func (d *Door) UpdateDailyLimits(ctx context.Context, ownerID uuid.UUID, messages *int32, costMicros *int64) (DailyLimits, error) {
	arg := db.SetDailyLimitsParams{OwnerID: ownerID}
	if messages != nil {
		arg.DailyMessages = pgtype.Int4{Int32: *messages, Valid: true}
	}
	if costMicros != nil {
		arg.DailyCostMicros = pgtype.Int8{Int64: *costMicros, Valid: true}
	}
	r, err := db.New(d.conn()).SetDailyLimits(ctx, arg)
	if err != nil {
		return DailyLimits{}, notFound("set daily limits", err)
	}
	return DailyLimits{Messages: r.DailyMessages, CostMicros: r.DailyCostMicros}, nil
}

// DueIngests lists memory outbox items due for ingestion at now (the caller's clock), across
// owners, oldest due first. It only reads (through memory_outbox's directory policy): the
// memory worker claims each item inside its owner's transaction (Outbox.ClaimIngest).
func (d *Door) DueIngests(ctx context.Context, now time.Time, limit int) ([]DueIngest, error) {
	rows, err := db.New(d.conn()).DueIngests(ctx, db.DueIngestsParams{Now: now, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("due ingests: %w", err)
	}
	out := make([]DueIngest, len(rows))
	for i, r := range rows {
		out[i] = DueIngest{ID: r.ID, OwnerID: r.OwnerID}
	}
	return out, nil
}

// IngestBacklog counts memory outbox items across owners, for an operator (steward_owner:
// the runtime's door role cannot read the outbox's errors).
func (d *Door) IngestBacklog(ctx context.Context) (IngestBacklog, error) {
	return ingestBacklog(ctx, db.New(d.conn()))
}

// ingestBacklog reads the outbox counts through q (a connection of steward_owner).
// ReadIngestBacklog is the memory ingestion backlog read through one connection (for steward
// doctor, as the table owner).
func ReadIngestBacklog(ctx context.Context, conn *pgx.Conn) (IngestBacklog, error) {
	return ingestBacklog(ctx, db.New(conn))
}

func ingestBacklog(ctx context.Context, q *db.Queries) (IngestBacklog, error) {
	r, err := q.IngestBacklog(ctx)
	if err != nil {
		return IngestBacklog{}, fmt.Errorf("ingest backlog: %w", err)
	}
	return IngestBacklog{Pending: r.Pending, Failed: r.Failed, LastError: r.LastError,
		OldestPending: time.Duration(r.OldestPendingSeconds * float64(time.Second))}, nil
}

// ScheduleScan is an enabled schedule seen by the scheduler's scan, with Since, where its
// search for due times starts: its latest claimed run, or its creation.
type ScheduleScan struct {
	Schedule
	Since time.Time
}

// ScanSchedules lists every owner's enabled schedules for the scheduler's tick (a reviewed
// cross-owner read: schedules.directory, job_runs.directory). Runs are claimed afterwards in
// each owner's own transaction.
func (d *Door) ScanSchedules(ctx context.Context) ([]ScheduleScan, error) {
	rows, err := db.New(d.conn()).ScanSchedules(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan schedules: %w", err)
	}
	out := make([]ScheduleScan, len(rows))
	for i, r := range rows {
		out[i] = ScheduleScan{Schedule: Schedule{ID: r.ID, OwnerID: r.OwnerID, Job: r.Job, Cron: r.Cron,
			Timezone: r.Timezone, Payload: r.Payload, Enabled: true, CreatedAt: r.CreatedAt}, Since: r.Since}
	}
	return out, nil
}

// ScanSweepOwners lists the owners the sweep has work for at now (turns.door, job_runs.door,
// household_approvals.door): a suspended turn or pending household vote past its expiry, a
// turn or job run running since before staleBefore. Every other owner is left alone.
func (d *Door) ScanSweepOwners(ctx context.Context, now, staleBefore time.Time) ([]uuid.UUID, error) {
	ids, err := db.New(d.conn()).ScanSweepOwners(ctx, db.ScanSweepOwnersParams{Now: now, StaleBefore: staleBefore})
	if err != nil {
		return nil, fmt.Errorf("scan sweep owners: %w", err)
	}
	return ids, nil
}

// HeldTurns are the owners and holders of the running and resuming turns whose leases have
// not lapsed at now, held by processes whose holder name starts with prefix ("host/").
func (d *Door) ScanHeldTurns(ctx context.Context, prefix string, now time.Time) ([]HeldTurns, error) {
	rows, err := db.New(d.conn()).ScanHeldTurns(ctx, db.ScanHeldTurnsParams{HolderPrefix: prefix, Now: now})
	if err != nil {
		return nil, fmt.Errorf("scan held turns: %w", err)
	}
	out := make([]HeldTurns, len(rows))
	for i, r := range rows {
		out[i] = HeldTurns{OwnerID: r.OwnerID, Holder: r.Holder}
	}
	return out, nil
}

// HeldTurns names an owner with turns a process holds.
type HeldTurns struct {
	OwnerID uuid.UUID
	Holder  string
}

// WebhookRoute is where a public hook id leads: the owner, and the secret that signs its
// deliveries. Never log it.
type WebhookRoute struct {
	Webhook
	Secret string
}

// LookupWebhook routes a public hook id (webhooks.directory); an unknown id is ErrNotFound.
// A revoked hook is returned with RevokedAt set.
func (d *Door) LookupWebhook(ctx context.Context, hookID string) (WebhookRoute, error) {
	r, err := db.New(d.conn()).LookupWebhook(ctx, hookID)
	if err != nil {
		return WebhookRoute{}, notFound("webhook", err)
	}
	return WebhookRoute{Webhook: Webhook{ID: r.ID, OwnerID: r.OwnerID, HookID: r.HookID, Source: r.Source,
		RevokedAt: r.RevokedAt}, Secret: r.Secret}, nil
}

// ScanChannelOwners lists the owners with an enabled notification channel, whose pending
// notifications the delivery worker flushes (notification_channels.directory).
func (d *Door) ScanChannelOwners(ctx context.Context) ([]uuid.UUID, error) {
	ids, err := db.New(d.conn()).ScanChannelOwners(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan channel owners: %w", err)
	}
	return ids, nil
}

// SetOwnerKill engages or releases one owner's kill switch, as the operator.
func (d *Door) SetOwnerKill(ctx context.Context, ownerID uuid.UUID, engaged bool, reason string) error {
	var at *time.Time
	if engaged {
		now := time.Now()
		at = &now
	}
	n, err := db.New(d.conn()).SetOwnerKill(ctx, db.SetOwnerKillParams{OwnerID: ownerID, KilledAt: at, KillReason: reason})
	return rowsOrNotFound("owner "+ownerID.String(), n, err)
}

// ControlStatus is the deployment's kill switch, its daily cost cap and use, and the owners
// who are stopped.
type ControlStatus struct {
	Stopped       bool        `json:"stopped"`
	Reason        string      `json:"reason,omitempty"`
	Since         *time.Time  `json:"since,omitempty"`
	CostCapMicros int64       `json:"daily_cost_cap_micros"`
	CostToday     int64       `json:"cost_today_micros"`
	StoppedOwners []OwnerStop `json:"stopped_owners"`
}

// OwnerStop is one stopped owner.
type OwnerStop struct {
	OwnerID uuid.UUID  `json:"owner_id"`
	Name    string     `json:"name"`
	Since   *time.Time `json:"since"`
	Reason  string     `json:"reason"`
}

// Control reads the deployment's controls.
func (d *Door) Control(ctx context.Context) (ControlStatus, error) {
	q := db.New(d.conn())
	g, err := q.GlobalControl(ctx)
	if err != nil {
		return ControlStatus{}, fmt.Errorf("controls: %w", err)
	}
	st := ControlStatus{Stopped: g.KilledAt != nil, Reason: g.KillReason, Since: g.KilledAt, CostCapMicros: g.DailyCostCapMicros,
		StoppedOwners: []OwnerStop{}}
	if st.CostToday, _, err = d.GlobalCostToday(ctx); err != nil {
		return st, err
	}
	rows, err := q.StoppedOwners(ctx)
	if err != nil {
		return st, fmt.Errorf("stopped owners: %w", err)
	}
	for _, r := range rows {
		st.StoppedOwners = append(st.StoppedOwners, OwnerStop{OwnerID: r.ID, Name: r.Name, Since: r.KilledAt, Reason: r.KillReason})
	}
	return st, nil
}

// conn is the door's pool for statements sent alone: one that met a dead connection is sent
// once more (lost.go).
func (d *Door) conn() retrying { return retrying{d.pool} }
