-- Two-way Telegram (docs/TELEGRAM.md, docs/ARCHITECTURE.md §19). An owner links a Telegram
-- chat to their Steward owner with a one-time code (telegram_link_codes, stored only as its
-- SHA-256, single-use, short-lived) sent to the deployment's bot; the chat is then served
-- (telegram_chats: one owner per chat, the chat's conversation and whether answers are also
-- spoken). Each update the bot receives from a linked chat is stored once
-- (telegram_updates, keyed by the Bot API's update_id, so Telegram's retries of a delivery
-- never make a second turn) and taken once by whoever runs it (status queued → taken).
-- Nothing is stored about a chat that is not linked. The webhook finds a code's and a
-- chat's owner before it knows the owner, and the scheduler's drain the updates left
-- queued, reads across owners, so they go through the door (steward_door, FOR SELECT, only
-- the columns those reads name); everything else runs as steward_app in the owner's
-- transaction, under forced row-level security.

-- +goose Up
CREATE TABLE telegram_link_codes (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    hash        bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, hash)
);

CREATE TABLE telegram_chats (
    owner_id        uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    chat_id         bigint NOT NULL UNIQUE,
    title           text NOT NULL DEFAULT '' CHECK (length(title) <= 200),
    conversation_id uuid,
    voice           boolean NOT NULL DEFAULT false,
    linked_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, chat_id)
);

CREATE TABLE telegram_updates (
    owner_id    uuid NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    update_id   bigint NOT NULL,
    chat_id     bigint NOT NULL,
    message     jsonb NOT NULL CHECK (jsonb_typeof(message) = 'object' AND length(message::text) <= 200000),
    status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'taken')),
    turn_id     uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, update_id),
    FOREIGN KEY (owner_id, chat_id) REFERENCES telegram_chats (owner_id, chat_id) ON DELETE CASCADE
);

ALTER TABLE telegram_link_codes ENABLE ROW LEVEL SECURITY;
ALTER TABLE telegram_link_codes FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON telegram_link_codes
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY door ON telegram_link_codes FOR SELECT TO steward_door USING (true);
GRANT SELECT, INSERT ON telegram_link_codes TO steward_app;
GRANT UPDATE (used_at) ON telegram_link_codes TO steward_app;
GRANT SELECT (owner_id, hash) ON telegram_link_codes TO steward_door;

ALTER TABLE telegram_chats ENABLE ROW LEVEL SECURITY;
ALTER TABLE telegram_chats FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON telegram_chats
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY door ON telegram_chats FOR SELECT TO steward_door USING (true);
GRANT SELECT, INSERT, DELETE ON telegram_chats TO steward_app;
GRANT UPDATE (conversation_id, voice) ON telegram_chats TO steward_app;
GRANT SELECT (owner_id, chat_id) ON telegram_chats TO steward_door;

ALTER TABLE telegram_updates ENABLE ROW LEVEL SECURITY;
ALTER TABLE telegram_updates FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_isolation ON telegram_updates
    USING (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid)
    WITH CHECK (owner_id = NULLIF(current_setting('app.owner_id', true), '')::uuid);
CREATE POLICY door ON telegram_updates FOR SELECT TO steward_door USING (true);
GRANT SELECT, INSERT ON telegram_updates TO steward_app;
GRANT UPDATE (status, turn_id) ON telegram_updates TO steward_app;
-- The scheduler's drain finds the updates whose hand-off was lost (still queued a minute
-- later) across owners; each is then taken in its owner's own transaction.
GRANT SELECT (owner_id, update_id, status, created_at) ON telegram_updates TO steward_door;
CREATE INDEX telegram_updates_queued ON telegram_updates (created_at) WHERE status = 'queued';

-- +goose Down
DROP TABLE telegram_updates;
DROP TABLE telegram_chats;
DROP TABLE telegram_link_codes;
