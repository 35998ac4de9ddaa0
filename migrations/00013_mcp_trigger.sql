-- Turns proposed by a client of the MCP face (trigger 'mcp'): a write an MCP client asked
-- for waits for the owner like a webhook's (docs/ARCHITECTURE.md §3).

-- +goose Up
ALTER TABLE turns DROP CONSTRAINT turns_trigger_check;
ALTER TABLE turns ADD CONSTRAINT turns_trigger_check
    CHECK (trigger IN ('chat', 'webhook', 'schedule', 'cli', 'mcp'));

-- +goose Down
ALTER TABLE turns DROP CONSTRAINT turns_trigger_check;
ALTER TABLE turns ADD CONSTRAINT turns_trigger_check
    CHECK (trigger IN ('chat', 'webhook', 'schedule', 'cli'));
