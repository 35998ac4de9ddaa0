-- Notification channels (issue 15 §1): an owner names several channels of five kinds and picks
-- one default; a notification goes to the channel it names or to the default. Non-secret
-- settings (chat id, SMTP host, …) are in settings; secrets (tokens, passwords, a Slack
-- webhook URL) are only in secret, sealed with AES-GCM under the deployment's
-- STEWARD_SECRET_KEY by internal/channel — the database never sees them in the clear. Row-level
-- security, the owner_isolation policy and steward_app's table grants come from 00004; the
-- door still reads only (owner_id, enabled) (00008).

-- +goose Up
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_owner_id_kind_key;
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_kind_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_kind_check
    CHECK (kind IN ('webhook', 'ntfy', 'telegram', 'slack', 'email'));
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_url_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_url_check
    CHECK ((url = '' OR url ~ '^https?://') AND length(url) <= 2000);
ALTER TABLE notification_channels
    ADD COLUMN name       text NOT NULL DEFAULT 'webhook' CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
    ADD COLUMN is_default boolean NOT NULL DEFAULT false,
    ADD COLUMN settings   jsonb NOT NULL DEFAULT '{}' CHECK (length(settings::text) <= 4000),
    ADD COLUMN secret     bytea CHECK (length(secret) <= 8000);
UPDATE notification_channels SET is_default = true;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_owner_name UNIQUE (owner_id, name);
CREATE UNIQUE INDEX notification_channels_one_default ON notification_channels (owner_id) WHERE is_default;

-- The channel a notification names ('' = the owner's default channel).
ALTER TABLE notifications ADD COLUMN channel text NOT NULL DEFAULT '' CHECK (length(channel) <= 32);

-- +goose Down
ALTER TABLE notifications DROP COLUMN channel;
DELETE FROM notification_channels WHERE kind <> 'webhook' OR NOT is_default;
DROP INDEX notification_channels_one_default;
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_owner_name;
ALTER TABLE notification_channels DROP COLUMN name, DROP COLUMN is_default, DROP COLUMN settings, DROP COLUMN secret;
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_url_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_url_check
    CHECK (url ~ '^https?://' AND length(url) <= 2000);
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_kind_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_kind_check CHECK (kind IN ('webhook'));
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_owner_id_kind_key UNIQUE (owner_id, kind);
