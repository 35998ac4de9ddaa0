-- name: AppendAuditBatch :execrows
INSERT INTO audit_log (owner_id, turn_id, seq, kind, data)
SELECT sqlc.arg(owner_id), sqlc.narg(turn_id),
    unnest(sqlc.arg(seqs)::int[]), unnest(sqlc.arg(kinds)::text[]), unnest(sqlc.arg(datas)::jsonb[]);

-- name: ListAudit :many
SELECT * FROM audit_log WHERE owner_id = sqlc.arg(owner_id) ORDER BY id DESC LIMIT sqlc.arg(max_rows);

-- name: ListTurnAudit :many
SELECT * FROM audit_log WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) ORDER BY seq, id;

-- name: NextTurnSeq :one
-- The sequence number after a turn's last audit row, for an event added after the turn ran.
SELECT (COALESCE(max(seq), 0) + 1)::int FROM audit_log WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id);
