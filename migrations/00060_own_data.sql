-- Own your data (docs/DATA.md): deleting a conversation takes with it what was made from
-- it, in the owner's one transaction under row-level security. Two tables the runtime only
-- inserted into and updated now also give rows back to it:
--   memory_outbox    a deleted conversation's pending ingestion is removed with it, so the
--                    memory worker cannot re-create its chunks afterwards (an ingestion in
--                    flight completes its item first, fenced on the row: with the row gone
--                    its completion moves nothing and its transaction stores nothing);
--   telegram_updates the Telegram messages that started the conversation's turns (their
--                    text) go with them.
-- The audit log stays append-only: its events hold ids, hashes, sizes and outcomes, never
-- a message's text (TestDeletedConversationLeavesNoText reads them).
--
-- Search over an owner's titles and messages reads their text parts (not thoughts, not the
-- recalled context Steward adds) through message_text(), one definition for the query and
-- for any index a later migration puts on it.

-- +goose Up
GRANT DELETE ON memory_outbox, telegram_updates TO steward_app;

-- +goose StatementBegin
CREATE FUNCTION message_text(content jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog AS $$
    SELECT coalesce(string_agg(p->>'text', ' '), '')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(content->'parts') = 'array' THEN content->'parts' ELSE '[]'::jsonb END) AS p
    WHERE p ? 'text' AND NOT coalesce((p->>'thought')::boolean, false) AND NOT coalesce((p->>'context')::boolean, false)
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION message_text(jsonb);
REVOKE DELETE ON memory_outbox, telegram_updates FROM steward_app;
