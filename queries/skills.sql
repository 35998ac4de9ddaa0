-- name: CreateSkill :one
INSERT INTO skills (owner_id, name, description, version, risk_level, triggers, required_tools, origin, source,
                    status, enabled, sha256, files, findings, worst, turn_id, call_id, embedding)
VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(description), sqlc.arg(version), sqlc.arg(risk_level),
        sqlc.arg(triggers), sqlc.arg(required_tools), sqlc.arg(origin), sqlc.arg(source), sqlc.arg(status),
        sqlc.arg(enabled), sqlc.arg(sha256), sqlc.arg(files), sqlc.arg(findings), sqlc.arg(worst),
        sqlc.narg(turn_id), sqlc.narg(call_id), sqlc.narg(embedding))
RETURNING id, created_at;

-- name: ListSkills :many
-- The files without their texts.
SELECT id, name, description, version, risk_level, triggers, required_tools, origin, source, status, enabled,
       sha256, COALESCE((SELECT jsonb_agg(f - 'text') FROM jsonb_array_elements(files) f), '[]')::jsonb AS files, findings, worst, overridden_at, turn_id, call_id, created_at
FROM skills WHERE owner_id = sqlc.arg(owner_id)
ORDER BY name, created_at DESC LIMIT sqlc.arg(max_rows);

-- name: GetSkill :one
SELECT id, name, description, version, risk_level, triggers, required_tools, origin, source, status, enabled,
       sha256, files, findings, worst, overridden_at, turn_id, call_id, created_at
FROM skills WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: GetSkillByName :one
SELECT id, name, description, version, risk_level, triggers, required_tools, origin, source, status, enabled,
       sha256, files, findings, worst, overridden_at, turn_id, call_id, created_at
FROM skills WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name) AND status <> 'staged';

-- name: GetStagedSkillForCall :one
SELECT id, name, description, version, risk_level, triggers, required_tools, origin, source, status, enabled,
       sha256, files, findings, worst, overridden_at, turn_id, call_id, created_at
FROM skills WHERE owner_id = sqlc.arg(owner_id) AND turn_id = sqlc.arg(turn_id) AND call_id = sqlc.arg(call_id);

-- name: ActivateSkill :execrows
-- Installs a staged skill: active (enabled) or blocked (off), replacing an installed skill of
-- the same name.
UPDATE skills SET status = sqlc.arg(status), enabled = sqlc.arg(enabled)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'staged';

-- name: DeleteInstalledSkillNamed :execrows
DELETE FROM skills WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name) AND status <> 'staged'
  AND id <> sqlc.arg(keep);

-- name: SetSkillEnabled :execrows
UPDATE skills SET enabled = sqlc.arg(enabled)
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status <> 'staged';

-- name: OverrideSkill :execrows
UPDATE skills SET overridden_at = sqlc.arg(at), enabled = true
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'blocked';

-- name: DeleteSkill :execrows
DELETE FROM skills WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: DeleteStaleStagedSkills :execrows
DELETE FROM skills WHERE owner_id = sqlc.arg(owner_id) AND status = 'staged' AND created_at < sqlc.arg(before);

-- name: NearestSkills :many
-- The owner's usable skills nearest in meaning to the query (cosine distance), for find_skill.
SELECT id, (embedding <=> sqlc.arg(query)::vector)::float8 AS distance
FROM skills
WHERE owner_id = sqlc.arg(owner_id) AND enabled AND embedding IS NOT NULL
  AND (status = 'active' OR (status = 'blocked' AND overridden_at IS NOT NULL))
ORDER BY embedding <=> sqlc.arg(query)::vector LIMIT sqlc.arg(max_rows);

-- name: ListSkillSettings :many
SELECT name, enabled FROM skill_settings WHERE owner_id = sqlc.arg(owner_id) ORDER BY name;

-- name: SetSkillSetting :exec
INSERT INTO skill_settings (owner_id, name, enabled) VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(enabled))
ON CONFLICT (owner_id, name) DO UPDATE SET enabled = EXCLUDED.enabled;

-- name: ListSkillUses :many
-- The owner's latest uses of skills (audit events skill_used), each with the owner's message
-- that began its turn (stored with the turn's messages once it ended, in its state before).
SELECT a.turn_id, a.data, a.created_at,
       COALESCE((SELECT m.content FROM messages m WHERE m.owner_id = a.owner_id AND m.turn_id = a.turn_id AND m.role = 'user'
                 ORDER BY m.seq LIMIT 1),
                (SELECT t.state -> 'messages' -> 0 FROM turns t WHERE t.owner_id = a.owner_id AND t.id = a.turn_id),
                '{}'::jsonb)::jsonb AS asked
FROM audit_log a
WHERE a.owner_id = sqlc.arg(owner_id) AND a.kind = 'skill_used'
ORDER BY a.id DESC LIMIT sqlc.arg(max_rows);
