-- name: CreateTask :one
INSERT INTO tasks (owner_id, title, notes, due, source_turn_id)
VALUES (sqlc.arg(owner_id), sqlc.arg(title), sqlc.arg(notes), sqlc.narg(due), sqlc.narg(source_turn_id))
RETURNING *;

-- name: GetTask :one
SELECT * FROM tasks WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ListTasks :many
SELECT * FROM tasks
WHERE owner_id = sqlc.arg(owner_id) AND (sqlc.arg(status)::text = '' OR status = sqlc.arg(status)::text)
ORDER BY status, due NULLS LAST, created_at, id LIMIT sqlc.arg(max_rows);

-- name: CompleteTask :one
UPDATE tasks SET status = 'done', completed_at = COALESCE(completed_at, now())
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id)
RETURNING *;

-- name: DeleteTask :execrows
DELETE FROM tasks WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: ReopenTask :execrows
-- Undoes complete_task: a done task is open again.
UPDATE tasks SET status = 'open', completed_at = NULL
WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id) AND status = 'done';
