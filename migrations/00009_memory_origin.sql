-- Memory provenance: every chunk records where its text came from, so recall never shows
-- untrusted text (a webhook's payload, a tool's or a web page's output, a document) as the
-- owner's words, and a turn that recalls it is gated like a webhook turn
-- (issue 10, item 2).

-- +goose Up
ALTER TABLE memory_chunks ADD COLUMN origin text NOT NULL DEFAULT 'owner'
    CHECK (origin IN ('owner', 'schedule', 'model', 'tool', 'webhook', 'document', 'web'));
ALTER TABLE memory_chunks ALTER COLUMN origin DROP DEFAULT;

-- Chunks remembered before this from webhook and scheduled turns: their user text was
-- labelled as the owner's. The migrating role owns the tables but is subject to their
-- forced row-level security; it lifts it for these updates only, inside this migration's
-- transaction.
ALTER TABLE memory_chunks NO FORCE ROW LEVEL SECURITY;
ALTER TABLE turns NO FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_facts NO FORCE ROW LEVEL SECURITY;
UPDATE memory_chunks c SET origin = 'webhook',
    text = regexp_replace(c.text, '^Owner( \(cont\.\))?: ', 'Webhook event (untrusted)\1: ')
FROM turns t
WHERE c.source_kind = 'conversation' AND t.owner_id = c.owner_id AND t.id::text = c.source_id
    AND t.trigger = 'webhook';
UPDATE memory_chunks c SET origin = 'schedule',
    text = regexp_replace(c.text, '^Owner( \(cont\.\))?: ', 'Scheduled job\1: ')
FROM turns t
WHERE c.source_kind = 'conversation' AND t.owner_id = c.owner_id AND t.id::text = c.source_id
    AND t.trigger = 'schedule';
-- Summaries are Steward's own words, except a summary of a conversation with a webhook turn.
UPDATE memory_chunks c SET origin = CASE WHEN EXISTS (
        SELECT 1 FROM turns t WHERE t.owner_id = c.owner_id AND t.conversation_id::text = c.source_id
            AND t.trigger = 'webhook') THEN 'webhook' ELSE 'model' END
WHERE c.source_kind = 'summary';
-- Facts extracted from webhook turns were stored as the owner's statements: they leave
-- recall (their trigger supersedes their chunks) and stay for the audit trail.
UPDATE memory_facts f SET superseded_at = now(), updated_at = now()
FROM turns t
WHERE f.source = 'ingest' AND f.superseded_at IS NULL AND t.owner_id = f.owner_id AND t.id = f.turn_id
    AND t.trigger IN ('webhook', 'schedule');
ALTER TABLE memory_facts FORCE ROW LEVEL SECURITY;
ALTER TABLE turns FORCE ROW LEVEL SECURITY;
ALTER TABLE memory_chunks FORCE ROW LEVEL SECURITY;

-- +goose Down
ALTER TABLE memory_chunks DROP COLUMN origin;
