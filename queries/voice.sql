-- name: RecordVoiceCall :exec
INSERT INTO voice_calls (owner_id, kind, model, duration_ms, input_tokens, output_tokens, audio_tokens, estimated, cost_micros)
VALUES (sqlc.arg(owner_id), sqlc.arg(kind), sqlc.arg(model), sqlc.arg(duration_ms), sqlc.arg(input_tokens),
    sqlc.arg(output_tokens), sqlc.arg(audio_tokens), sqlc.arg(estimated), sqlc.arg(cost_micros));

-- name: VoiceCallsToday :one
-- The owner's voice calls since midnight UTC and their cost (the owner's view; tests).
SELECT count(*)::bigint AS calls, COALESCE(sum(cost_micros), 0)::bigint AS cost_micros FROM voice_calls
WHERE owner_id = sqlc.arg(owner_id)
    AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
