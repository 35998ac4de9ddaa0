-- name: CreateDocument :one
INSERT INTO documents (id, owner_id, name, content_type, size_bytes, sha256, content, content_key, text, source, turn_id)
VALUES (sqlc.arg(id), sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(content_type), sqlc.arg(size_bytes), sqlc.arg(sha256),
        sqlc.narg(content), sqlc.narg(content_key), sqlc.arg(text), sqlc.arg(source), sqlc.narg(turn_id))
RETURNING id, name, content_type, size_bytes, sha256, source, turn_id, length(text)::bigint AS text_chars, created_at;

-- name: ListDocuments :many
SELECT id, name, content_type, size_bytes, sha256, source, turn_id, length(text)::bigint AS text_chars, created_at
FROM documents WHERE owner_id = sqlc.arg(owner_id)
ORDER BY created_at DESC, id LIMIT sqlc.arg(max_rows);

-- name: GetDocument :one
SELECT id, name, content_type, size_bytes, sha256, source, turn_id, length(text)::bigint AS text_chars, created_at,
       substr(text, sqlc.arg(offset_chars)::int + 1, sqlc.arg(max_chars)::int)::text AS text_part
FROM documents WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: DocumentContent :one
SELECT name, content_type, content, content_key FROM documents WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: DeleteDocument :execrows
DELETE FROM documents WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: SupersedeDocumentChunks :exec
UPDATE memory_chunks SET superseded_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND source_kind = 'document' AND source_id = sqlc.arg(document_id)::text
  AND superseded_at IS NULL;
