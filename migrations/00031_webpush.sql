-- Web Push (docs/ARCHITECTURE.md §7, internal/channel): a browser's push subscription is a
-- notification channel of kind webpush. Its endpoint and keys (p256dh, auth) are secrets,
-- sealed in secret like any channel's; url holds only the push service's origin, for the
-- owner to see. When the push service answers 404 or 410 the subscription is gone: the
-- channel is disabled and gone_at says since when, so the channel list can say so.

-- +goose Up
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_kind_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_kind_check
    CHECK (kind IN ('webhook', 'ntfy', 'telegram', 'slack', 'email', 'webpush'));
ALTER TABLE notification_channels ADD COLUMN gone_at timestamptz;

-- +goose Down
DELETE FROM notification_channels WHERE kind = 'webpush';
ALTER TABLE notification_channels DROP COLUMN gone_at;
ALTER TABLE notification_channels DROP CONSTRAINT notification_channels_kind_check;
ALTER TABLE notification_channels ADD CONSTRAINT notification_channels_kind_check
    CHECK (kind IN ('webhook', 'ntfy', 'telegram', 'slack', 'email'));
