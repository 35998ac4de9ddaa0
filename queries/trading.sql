-- name: EnsureTradingAccount :exec
-- The paper account is opened with the deployment's starting cash the first time it is used.
INSERT INTO trading_accounts (owner_id, cash_minor) VALUES (sqlc.arg(owner_id), sqlc.arg(cash_minor))
ON CONFLICT (owner_id) DO NOTHING;

-- name: GetTradingAccount :one
SELECT * FROM trading_accounts WHERE owner_id = sqlc.arg(owner_id);

-- name: LockTradingAccount :one
-- The row lock orders an owner's orders: the caps' check and the order's row (and a paper
-- fill) happen under it, so two orders never both pass a daily cap only one fits.
SELECT * FROM trading_accounts WHERE owner_id = sqlc.arg(owner_id) FOR UPDATE;

-- name: UpdateTradingSettings :execrows
UPDATE trading_accounts SET order_cap_minor = sqlc.narg(order_cap_minor), daily_cap_minor = sqlc.narg(daily_cap_minor),
    symbols = sqlc.narg(symbols), commission_minor = sqlc.arg(commission_minor), updated_at = now()
WHERE owner_id = sqlc.arg(owner_id);

-- name: SetTradingCash :execrows
UPDATE trading_accounts SET cash_minor = sqlc.arg(cash_minor), updated_at = now() WHERE owner_id = sqlc.arg(owner_id);

-- name: SetTradingAlpacaKeys :execrows
UPDATE trading_accounts SET alpaca_keys = sqlc.narg(alpaca_keys), updated_at = now() WHERE owner_id = sqlc.arg(owner_id);

-- name: SetTradingPrice :exec
INSERT INTO trading_prices (owner_id, symbol, price_minor, updated_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(symbol), sqlc.arg(price_minor), sqlc.arg(updated_at))
ON CONFLICT (owner_id, symbol) DO UPDATE SET price_minor = EXCLUDED.price_minor, updated_at = EXCLUDED.updated_at;

-- name: GetTradingPrice :one
SELECT * FROM trading_prices WHERE owner_id = sqlc.arg(owner_id) AND symbol = sqlc.arg(symbol);

-- name: ListTradingPrices :many
SELECT * FROM trading_prices WHERE owner_id = sqlc.arg(owner_id) ORDER BY symbol LIMIT 500;

-- name: ListTradingPositions :many
SELECT * FROM trading_positions WHERE owner_id = sqlc.arg(owner_id) ORDER BY symbol LIMIT 500;

-- name: GetTradingPosition :one
SELECT * FROM trading_positions WHERE owner_id = sqlc.arg(owner_id) AND symbol = sqlc.arg(symbol);

-- name: SetTradingPosition :exec
INSERT INTO trading_positions (owner_id, symbol, qty, cost_minor)
VALUES (sqlc.arg(owner_id), sqlc.arg(symbol), sqlc.arg(qty), sqlc.arg(cost_minor))
ON CONFLICT (owner_id, symbol) DO UPDATE SET qty = EXCLUDED.qty, cost_minor = EXCLUDED.cost_minor;

-- name: DeleteTradingPosition :execrows
DELETE FROM trading_positions WHERE owner_id = sqlc.arg(owner_id) AND symbol = sqlc.arg(symbol);

-- name: InsertTradingOrder :one
INSERT INTO trading_orders (owner_id, client_order_id, broker, symbol, side, qty, notional_minor, type,
    limit_price_minor, time_in_force, status, estimate_minor, created_at, updated_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(client_order_id), sqlc.arg(broker), sqlc.arg(symbol), sqlc.arg(side),
    sqlc.narg(qty), sqlc.narg(notional_minor), sqlc.arg(type), sqlc.narg(limit_price_minor), sqlc.arg(time_in_force),
    sqlc.arg(status), sqlc.arg(estimate_minor), sqlc.arg(created_at), sqlc.arg(created_at))
RETURNING *;

-- name: GetTradingOrder :one
SELECT * FROM trading_orders WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: GetTradingOrderByClientID :one
SELECT * FROM trading_orders WHERE owner_id = sqlc.arg(owner_id) AND client_order_id = sqlc.arg(client_order_id);

-- name: ListTradingOrders :many
SELECT * FROM trading_orders WHERE owner_id = sqlc.arg(owner_id) ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: UpdateTradingOrder :one
UPDATE trading_orders SET status = sqlc.arg(status), broker_order_id = COALESCE(sqlc.narg(broker_order_id), broker_order_id),
    filled_qty = sqlc.arg(filled_qty), filled_price_minor = sqlc.narg(filled_price_minor),
    commission_minor = sqlc.arg(commission_minor), reason = sqlc.narg(reason), updated_at = sqlc.arg(updated_at)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
RETURNING *;

-- name: TradingNotionalSince :one
-- The day's notional for the daily cap: every order placed since, at its estimate, but those
-- the broker rejected.
SELECT COALESCE(sum(estimate_minor), 0)::bigint FROM trading_orders
WHERE owner_id = sqlc.arg(owner_id) AND created_at >= sqlc.arg(since) AND status <> 'rejected';
