-- name: UpsertMCPServer :exec
INSERT INTO mcp_servers (owner_id, name, url, headers, approved_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(name), sqlc.arg(url), sqlc.arg(headers), sqlc.arg(approved_at))
ON CONFLICT (owner_id, name) DO UPDATE SET url = EXCLUDED.url, headers = EXCLUDED.headers, approved_at = EXCLUDED.approved_at;

-- name: DeleteMCPTools :exec
DELETE FROM mcp_tools WHERE owner_id = sqlc.arg(owner_id) AND server = sqlc.arg(server);

-- name: InsertMCPTool :exec
INSERT INTO mcp_tools (owner_id, server, name, hash, description, input_schema, read_only, write_override, enabled)
VALUES (sqlc.arg(owner_id), sqlc.arg(server), sqlc.arg(name), sqlc.arg(hash), sqlc.arg(description), sqlc.arg(input_schema),
        sqlc.arg(read_only), sqlc.arg(write_override), sqlc.arg(enabled));

-- name: ListMCPServers :many
SELECT name, url, headers, created_at, approved_at FROM mcp_servers
WHERE owner_id = sqlc.arg(owner_id) ORDER BY name;

-- name: GetMCPServer :one
SELECT name, url, headers, created_at, approved_at FROM mcp_servers
WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: ListMCPTools :many
SELECT server, name, hash, description, input_schema, read_only, write_override, enabled, changed_at FROM mcp_tools
WHERE owner_id = sqlc.arg(owner_id) ORDER BY server, name;

-- name: DeleteMCPServer :execrows
DELETE FROM mcp_servers WHERE owner_id = sqlc.arg(owner_id) AND name = sqlc.arg(name);

-- name: MarkMCPToolChanged :execrows
UPDATE mcp_tools SET changed_at = sqlc.arg(changed_at)
WHERE owner_id = sqlc.arg(owner_id) AND server = sqlc.arg(server) AND name = sqlc.arg(name) AND changed_at IS NULL;

-- name: SetMCPTool :one
-- The owner's choice for one tool: a write override and/or enabled, each kept when null.
-- Enabling a tool whose hash changed matches no row: only a re-approval clears changed_at.
UPDATE mcp_tools SET write_override = coalesce(sqlc.narg(write_override)::boolean, write_override),
                     enabled = coalesce(sqlc.narg(enabled)::boolean, enabled)
WHERE owner_id = sqlc.arg(owner_id) AND server = sqlc.arg(server) AND name = sqlc.arg(name)
  AND (sqlc.narg(enabled)::boolean IS NOT TRUE OR changed_at IS NULL)
RETURNING server, name, hash, description, input_schema, read_only, write_override, enabled, changed_at;
