-- The undo window (issue 17 §3; docs/ARCHITECTURE.md §2). A database-local write records in
-- its journal row how to revert it (inverse, computed by the tool from what it changed) and
-- when it ran (executed_at, on the application's clock); an undo within STEWARD_UNDO_WINDOW
-- sets undone_at and undone_by exactly once. A call with no inverse cannot be undone.
-- tool_calls keeps its row-level security and steward_app's grants (00001).

-- +goose Up
ALTER TABLE tool_calls
    ADD COLUMN inverse     jsonb CHECK (inverse IS NULL OR jsonb_typeof(inverse) = 'object'),
    ADD COLUMN executed_at timestamptz,
    ADD COLUMN undone_at   timestamptz,
    ADD COLUMN undone_by   text;

-- +goose Down
ALTER TABLE tool_calls DROP COLUMN undone_by, DROP COLUMN undone_at, DROP COLUMN executed_at,
    DROP COLUMN inverse;
