package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/steward"
)

// Export reads the owner's data a page at a time for the export (docs/DATA.md): each page
// is one short transaction's read, so nothing is held open while the export is written.
type Export struct{ *conn }

// ExportTable is one table's rows in the export: the columns named (never a secret: sealed
// passwords, key and token hashes, embeddings and request headers are left out), paged by
// Key (unique for the owner, of type KeyType).
type ExportTable struct {
	File    string // the file in the export's zip
	Table   string
	Columns string
	Key     string
	KeyType string
	// About is what the file holds, for the export's README.
	About string
}

// ExportTables are the tables exported as JSON lines beside the conversations, memory
// documents and ledger the export writes in their own formats. A table with an owner_id
// and no row here is either exported in its own format, or holds only what is not the
// owner's to take (hashes of sessions, keys and one-time codes; the outbox's queue).
var ExportTables = []ExportTable{
	{"memory/facts.jsonl", "memory_facts", "id, kind, subject, content, source, origin, turn_id, created_at, updated_at, superseded_at", "id", "uuid",
		"memory facts (superseded_at set: forgotten or replaced)"},
	{"memory/chunks.jsonl", "memory_chunks", "id, source_kind, source_id, origin, text, created_at, superseded_at", "id", "uuid",
		"memory chunks: the text recall searches, without its vectors"},
	{"tasks.jsonl", "tasks", "id, title, notes, due, status, source_turn_id, created_at, completed_at", "id", "uuid", "tasks and reminders"},
	{"automations/schedules.jsonl", "schedules", "id, job, cron, timezone, payload, enabled, created_at", "id", "uuid", "scheduled jobs (automations)"},
	{"automations/runs.jsonl", "job_runs", "id, schedule_id, job, trigger, scheduled_for, status, turn_id, error, created_at, started_at, finished_at", "id", "uuid",
		"runs of jobs and webhooks"},
	{"automations/webhooks.jsonl", "webhooks", "id, hook_id, source, created_at, revoked_at", "id", "uuid", "webhook endpoints (without their signing secrets)"},
	{"automations/webhook_deliveries.jsonl", "webhook_deliveries", "id, webhook_id, message_id, run_id, body, received_at", "id", "bigint", "webhook deliveries received"},
	{"rules.jsonl", "standing_rules", "id, tool, predicate, effect, source, note, created_at", "id", "uuid", "standing rules"},
	{"caps.jsonl", "spending_caps", "id, currency, per_action_minor, window_minor, window_seconds, created_at", "id", "uuid", "spending caps"},
	{"spending.jsonl", "spend_ledger", "id, turn_id, call_id, tool, amount_minor, currency, created_at", "id", "bigint", "money Steward spent on the owner's behalf"},
	{"notifications.jsonl", "notifications", "id, title, message, turn_id, created_at, delivered_at", "id", "uuid", "notifications"},
	{"channels.jsonl", "notification_channels", "id, name, kind, enabled, is_default, created_at", "id", "uuid",
		"notification channels (kinds only: their URLs and tokens are secrets)"},
	{"accounts.jsonl", "connected_accounts", "kind, created_at", "kind", "text", "mail and calendar accounts (kinds only: no password, no server settings)"},
	{"mcp_servers.jsonl", "mcp_servers", "name, created_at, approved_at", "name", "text", "MCP servers (names only: their URLs and headers may hold secrets)"},
	{"skills.jsonl", "skills", "id, name, description, version, origin, source, status, enabled, sha256, files, findings, created_at", "id", "uuid", "installed skills"},
	{"documents.jsonl", "documents", "id, name, content_type, size_bytes, sha256, source, turn_id, created_at", "id", "uuid",
		"documents (their originals are under documents/)"},
	{"trading/orders.jsonl", "trading_orders", "id, client_order_id, broker, symbol, side, qty, notional_minor, type, limit_price_minor, time_in_force, status, filled_qty, filled_price_minor, commission_minor, reason, created_at, updated_at", "id", "uuid",
		"trades"},
	{"trading/positions.jsonl", "trading_positions", "symbol, qty, cost_minor", "symbol", "text", "positions"},
	{"turns.jsonl", "turns", "id, conversation_id, trigger, status, model, iterations, input_tokens, output_tokens, cost_micros, error, created_at, finished_at", "id", "uuid",
		"turns: what each cost and how it ended"},
	{"tool_calls.jsonl", "tool_calls", "id, turn_id, call_id, tool, kind, args, status, decided_by, decision_message, result, created_at", "id", "uuid",
		"tool calls with their decisions and results"},
	{"audit.jsonl", "audit_log", "id, turn_id, seq, kind, data, created_at", "id", "bigint", "the audit log"},
}

// Page reads up to limit rows of tt after the key after ("" for the first page), as JSON
// objects, and the last row's key.
func (t Export) Page(ctx context.Context, tt ExportTable, after string, limit int) ([]json.RawMessage, string, error) {
	sql := fmt.Sprintf(`SELECT x.k, to_jsonb(x) - 'k' FROM (SELECT %s::text AS k, %s FROM %s
		WHERE owner_id = $1 AND ($2::text = '' OR %s > $2::%s) ORDER BY %s LIMIT $3) x`,
		tt.Key, tt.Columns, tt.Table, tt.Key, tt.KeyType, tt.Key)
	rows, err := t.tx.Query(ctx, sql, t.ownerID, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("export %s: %w", tt.Table, err)
	}
	defer rows.Close()
	var out []json.RawMessage
	last := ""
	for rows.Next() {
		var row []byte
		if err := rows.Scan(&last, &row); err != nil {
			return nil, "", fmt.Errorf("export %s: %w", tt.Table, err)
		}
		out = append(out, row)
	}
	return out, last, rows.Err()
}

// Conversations reads up to limit conversations after id (uuid.Nil for the first page).
func (t Export) Conversations(ctx context.Context, after uuid.UUID, limit int) ([]steward.Conversation, error) {
	rows, err := t.tx.Query(ctx, `SELECT id, title, created_at, updated_at FROM conversations
		WHERE owner_id = $1 AND id > $2 ORDER BY id LIMIT $3`, t.ownerID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("export conversations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (steward.Conversation, error) {
		var c steward.Conversation
		err := r.Scan(&c.ID, &c.Title, &c.CreatedAt, &c.UpdatedAt)
		return c, err
	})
}

// Messages reads up to limit messages of a conversation after seq, in order.
func (t Export) Messages(ctx context.Context, conversationID uuid.UUID, afterSeq, limit int) ([]steward.StoredMessage, error) {
	rows, err := t.tx.Query(ctx, `SELECT seq, turn_id, content, created_at FROM messages
		WHERE owner_id = $1 AND conversation_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, t.ownerID, conversationID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("export messages: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (steward.StoredMessage, error) {
		var m steward.StoredMessage
		var content []byte
		if err := r.Scan(&m.Seq, &m.TurnID, &content, &m.CreatedAt); err != nil {
			return m, err
		}
		return m, json.Unmarshal(content, &m.Message)
	})
}

// LedgerTransaction is one ledger transaction with its postings, for the export's CSV and
// plain-text ledger.
type LedgerTransaction struct {
	ID          uuid.UUID
	Date        time.Time
	Description string
	Merchant    string
	Postings    []LedgerPosting
}

// LedgerPosting is one leg of a transaction.
type LedgerPosting struct {
	Account     string `json:"account"`
	Kind        string `json:"kind"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// Ledger reads up to limit ledger transactions after id (uuid.Nil first), with their postings.
func (t Export) Ledger(ctx context.Context, after uuid.UUID, limit int) ([]LedgerTransaction, error) {
	rows, err := t.tx.Query(ctx, `SELECT t.id, t.date, t.description, coalesce(t.merchant, ''),
			coalesce((SELECT json_agg(json_build_object('account', a.name, 'kind', a.kind, 'amount_minor', p.amount_minor, 'currency', p.currency) ORDER BY p.id)
				FROM ledger_postings p JOIN ledger_accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
				WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id), '[]')
		FROM ledger_transactions t WHERE t.owner_id = $1 AND t.id > $2 ORDER BY t.id LIMIT $3`, t.ownerID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("export ledger: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (LedgerTransaction, error) {
		var lt LedgerTransaction
		var postings []byte
		if err := r.Scan(&lt.ID, &lt.Date, &lt.Description, &lt.Merchant, &postings); err != nil {
			return lt, err
		}
		return lt, json.Unmarshal(postings, &lt.Postings)
	})
}
