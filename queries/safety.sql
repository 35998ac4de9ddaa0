-- name: ControlState :one
-- The kill switches that apply to the current owner (their own and the deployment's), the
-- owner's gate mode, and whether a suspension notifies them (an enabled default channel,
-- notification_channels_one_default): the gate's reads in one statement.
SELECT o.killed_at AS owner_killed_at, o.kill_reason AS owner_kill_reason,
    c.killed_at AS global_killed_at, c.kill_reason AS global_kill_reason, o.mode AS owner_mode,
    EXISTS (SELECT 1 FROM notification_channels n
        WHERE n.owner_id = o.id AND n.is_default AND n.enabled) AS notifiable
FROM owners o CROSS JOIN controls c WHERE o.id = sqlc.arg(owner_id);

-- name: SetOwnerKill :execrows
UPDATE owners SET killed_at = sqlc.narg(killed_at), kill_reason = sqlc.arg(kill_reason)
WHERE id = sqlc.arg(owner_id);

-- name: SetGlobalKill :exec
UPDATE controls SET killed_at = sqlc.narg(killed_at), kill_reason = sqlc.arg(kill_reason);

-- name: GlobalCostToday :one
-- Turns, voice calls (docs/ARCHITECTURE.md §18) and model calls outside turns (memory's)
-- since midnight UTC, across owners.
SELECT (COALESCE((SELECT sum(cost_micros) FROM turns
        WHERE created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0)
    + COALESCE((SELECT sum(cost_micros) FROM voice_calls
        WHERE created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0)
    + COALESCE((SELECT sum(cost_micros) FROM model_calls
        WHERE created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0))::bigint AS cost_micros,
    (SELECT daily_cost_cap_micros FROM controls)::bigint AS cap_micros;

-- name: SetGlobalCostCap :exec
UPDATE controls SET daily_cost_cap_micros = sqlc.arg(cap_micros);

-- name: GetCap :one
SELECT * FROM spending_caps WHERE owner_id = sqlc.arg(owner_id) AND currency = sqlc.arg(currency);

-- name: UpsertCap :one
INSERT INTO spending_caps (owner_id, currency, per_action_minor, window_minor, window_seconds)
VALUES (sqlc.arg(owner_id), sqlc.arg(currency), sqlc.arg(per_action_minor), sqlc.arg(window_minor), sqlc.arg(window_seconds))
ON CONFLICT (owner_id, currency) DO UPDATE SET per_action_minor = EXCLUDED.per_action_minor,
    window_minor = EXCLUDED.window_minor, window_seconds = EXCLUDED.window_seconds
RETURNING *;

-- name: ListCaps :many
SELECT * FROM spending_caps WHERE owner_id = sqlc.arg(owner_id) ORDER BY currency;

-- name: SpentInWindow :one
SELECT COALESCE(sum(amount_minor), 0)::bigint FROM spend_ledger
WHERE owner_id = sqlc.arg(owner_id) AND currency = sqlc.arg(currency)
    AND created_at > now() - make_interval(secs => sqlc.arg(window_seconds)::float8);

-- name: RecordSpend :exec
INSERT INTO spend_ledger (owner_id, turn_id, call_id, tool, amount_minor, currency)
VALUES (sqlc.arg(owner_id), sqlc.narg(turn_id), sqlc.arg(call_id), sqlc.arg(tool), sqlc.arg(amount_minor), sqlc.arg(currency));

-- name: LockOwner :exec
-- Serialises budget checks of one owner's concurrent turn starts.
SELECT pg_advisory_xact_lock(hashtextextended(sqlc.arg(owner_id)::text, 7));

-- name: SetDailyLimits :one
-- A NULL limit keeps its current value.
UPDATE owners SET daily_messages = COALESCE(sqlc.narg(daily_messages), daily_messages),
    daily_cost_micros = COALESCE(sqlc.narg(daily_cost_micros), daily_cost_micros)
WHERE id = sqlc.arg(owner_id)
RETURNING daily_messages, daily_cost_micros;

-- name: GlobalControl :one
SELECT killed_at, kill_reason, daily_cost_cap_micros FROM controls;

-- name: StoppedOwners :many
SELECT id, name, killed_at, kill_reason FROM owners WHERE killed_at IS NOT NULL ORDER BY killed_at;

-- name: AdmitState :one
-- What admitting a turn reads, in one statement: the kill switches that apply to the owner
-- and their budget use since midnight UTC (the day's owner_usage row), with their limits;
-- and the owner's gate mode, so ControlState need not be read again in the transaction.
SELECT o.killed_at AS owner_killed_at, o.kill_reason AS owner_kill_reason,
    c.killed_at AS global_killed_at, c.kill_reason AS global_kill_reason,
    o.daily_messages, o.daily_cost_micros,
    COALESCE(u.messages, 0)::int AS messages, COALESCE(u.cost_micros, 0)::bigint AS cost_micros,
    o.mode AS owner_mode
FROM owners o CROSS JOIN controls c
LEFT JOIN owner_usage u ON u.owner_id = o.id AND u.day = (now() AT TIME ZONE 'UTC')::date
WHERE o.id = sqlc.arg(owner_id);
