-- The pinned summary of a conversation's oldest turns (issue 16, the context budget): when a
-- conversation outgrows STEWARD_CONTEXT_TOKENS, its oldest turn groups are summarised once by
-- the background model and later turns send the summary instead of re-summarising
-- (internal/agent/context.go). {"text", "through_seq", "groups", "untrusted"}; NULL: none yet.

-- +goose Up
ALTER TABLE conversations ADD COLUMN summary jsonb;

-- +goose Down
ALTER TABLE conversations DROP COLUMN summary;
