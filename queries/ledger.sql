-- name: LedgerAccounts :many
SELECT * FROM ledger_accounts WHERE owner_id = sqlc.arg(owner_id) ORDER BY kind, name;

-- name: LedgerAccountByName :one
SELECT * FROM ledger_accounts WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: CreateLedgerAccount :one
INSERT INTO ledger_accounts (owner_id, name, kind, currency)
VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(kind), sqlc.arg(currency))
ON CONFLICT (owner_id, name) DO NOTHING
RETURNING *;

-- name: InsertLedgerTransaction :one
-- An import whose hash is already in the book inserts nothing (no row returned).
INSERT INTO ledger_transactions (owner_id, date, description, merchant, source, import_hash)
VALUES (sqlc.arg(owner_id), sqlc.arg(date), sqlc.arg(description), sqlc.arg(merchant), sqlc.arg(source),
    sqlc.narg(import_hash))
ON CONFLICT (owner_id, import_hash) WHERE import_hash IS NOT NULL DO NOTHING
RETURNING id;

-- name: InsertLedgerPosting :exec
INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency)
VALUES (sqlc.arg(owner_id), sqlc.arg(transaction_id), sqlc.arg(account_id), sqlc.arg(amount_minor),
    sqlc.arg(currency));

-- name: LedgerEntries :many
-- One row per posting to an asset or liability account (the money side of a transaction),
-- with its category: the expense or income account(s) of the same transaction. Each of the
-- window's transactions reads its own postings (ledger_postings_transaction) in a LATERAL
-- subquery that the planner cannot flatten into a join (it has a window function), so the
-- report costs what the window holds, never the account's whole history (docs/ARCHITECTURE.md
-- §21).
SELECT t.id, t.date, t.description, t.merchant, t.source, m.name AS account, m.amount_minor, m.currency,
    COALESCE(m.category, '')::text AS category
FROM ledger_transactions t
CROSS JOIN LATERAL (
    SELECT a.name, a.kind, p.amount_minor, p.currency,
        string_agg(a.name, ', ') FILTER (WHERE a.kind IN ('expense', 'income'))
            OVER (ORDER BY a.name ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS category
    FROM ledger_postings p JOIN ledger_accounts a ON a.owner_id = p.owner_id AND a.id = p.account_id
    WHERE p.owner_id = t.owner_id AND p.transaction_id = t.id
) m
WHERE t.owner_id = sqlc.arg(owner_id) AND t.date >= sqlc.arg(from_date) AND t.date < sqlc.arg(to_date)
    AND m.kind IN ('asset', 'liability')
ORDER BY t.date, t.created_at, t.id;

-- name: RepointCategory :execrows
-- Categorising moves a transaction's expense or income postings to another account: the
-- amounts do not change, so the transaction still balances.
UPDATE ledger_postings p SET account_id = sqlc.arg(account_id)
FROM ledger_accounts a
WHERE p.owner_id = sqlc.arg(owner_id) AND a.owner_id = p.owner_id AND a.id = p.account_id
    AND a.kind IN ('expense', 'income') AND p.transaction_id = ANY(sqlc.arg(transaction_ids)::uuid[]);

-- name: UpsertLedgerBudget :one
INSERT INTO ledger_budgets (owner_id, category, monthly_minor, currency)
VALUES (sqlc.arg(owner_id), sqlc.arg(category), sqlc.arg(monthly_minor), sqlc.arg(currency))
ON CONFLICT (owner_id, category) DO UPDATE SET monthly_minor = EXCLUDED.monthly_minor,
    currency = EXCLUDED.currency, updated_at = now()
RETURNING *;

-- name: LedgerBudgets :many
SELECT * FROM ledger_budgets WHERE owner_id = sqlc.arg(owner_id) ORDER BY category;

-- name: DeleteLedgerTransaction :execrows
-- Undoes record_expense: the transaction goes with its postings (ON DELETE CASCADE).
DELETE FROM ledger_transactions WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);
