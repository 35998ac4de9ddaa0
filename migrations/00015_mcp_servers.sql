-- Remote MCP servers an owner registered and the tools of each the owner approved
-- (issue 15 §3). A tool is approved with the SHA-256 of its name, description and input
-- schema; a server that later presents a different hash gets that tool disabled
-- (changed_at set) until the owner approves the server again (a rug-pull defence).
-- read_only is the tool's readOnlyHint at approval time; write_override is the owner's
-- "treat it as a write". Header values (tokens) are stored but never returned by the API.

-- +goose Up
CREATE TABLE mcp_servers (
    owner_id   uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name ~ '^[a-z0-9]{1,20}$'),
    url        text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    headers    jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    approved_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, name)
);
ALTER TABLE mcp_servers ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_servers FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON mcp_servers
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_servers TO steward_app;

CREATE TABLE mcp_tools (
    owner_id       uuid NOT NULL,
    server         text NOT NULL,
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    hash           text NOT NULL,
    description    text NOT NULL,
    input_schema   jsonb NOT NULL,
    read_only      boolean NOT NULL,
    write_override boolean NOT NULL DEFAULT false,
    enabled        boolean NOT NULL DEFAULT true,
    changed_at     timestamptz,
    PRIMARY KEY (owner_id, server, name),
    FOREIGN KEY (owner_id, server) REFERENCES mcp_servers (owner_id, name) ON DELETE CASCADE
);
ALTER TABLE mcp_tools ENABLE ROW LEVEL SECURITY;
ALTER TABLE mcp_tools FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON mcp_tools
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_tools TO steward_app;

-- +goose Down
DROP TABLE mcp_tools;
DROP TABLE mcp_servers;
