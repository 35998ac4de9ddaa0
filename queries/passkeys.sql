-- name: CreatePasskey :one
INSERT INTO passkeys (owner_id, credential_id, public_key, attestation_type, aaguid, sign_count, flags, transports, name)
VALUES (sqlc.arg(owner_id), sqlc.arg(credential_id), sqlc.arg(public_key), sqlc.arg(attestation_type), sqlc.arg(aaguid),
        sqlc.arg(sign_count), sqlc.arg(flags), sqlc.arg(transports)::text[], sqlc.arg(name))
RETURNING id, owner_id, credential_id, public_key, attestation_type, aaguid, sign_count, flags, transports, name, created_at, last_used_at;

-- name: ListPasskeys :many
SELECT id, owner_id, credential_id, public_key, attestation_type, aaguid, sign_count, flags, transports, name, created_at, last_used_at
FROM passkeys
WHERE owner_id = sqlc.arg(owner_id)
ORDER BY created_at, id
LIMIT 100;

-- name: DeletePasskey :execrows
DELETE FROM passkeys WHERE owner_id = sqlc.arg(owner_id) AND id = sqlc.arg(id);

-- name: UsePasskey :execrows
-- A use moves the counter forward (or keeps it at 0, for authenticators without one): a
-- counter that went back, or a concurrent use of the same count, changes nothing.
UPDATE passkeys SET sign_count = sqlc.arg(sign_count), flags = sqlc.arg(flags), last_used_at = sqlc.arg(now)::timestamptz
WHERE owner_id = sqlc.arg(owner_id) AND credential_id = sqlc.arg(credential_id)
  AND (sign_count < sqlc.arg(sign_count) OR (sign_count = 0 AND sqlc.arg(sign_count) = 0));

-- name: LookupPasskeyOwner :one
SELECT owner_id FROM passkeys WHERE credential_id = sqlc.arg(credential_id);

-- name: CreateDeviceLink :one
INSERT INTO device_links (owner_id, hash, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(hash), sqlc.arg(expires_at))
RETURNING id, created_at, expires_at, used_at;

-- name: GetDeviceLink :one
SELECT id, created_at, expires_at, used_at FROM device_links
WHERE owner_id = sqlc.arg(owner_id) AND hash = sqlc.arg(hash);

-- name: UseDeviceLink :execrows
UPDATE device_links SET used_at = sqlc.arg(now)::timestamptz
WHERE owner_id = sqlc.arg(owner_id) AND hash = sqlc.arg(hash) AND used_at IS NULL AND expires_at > sqlc.arg(now);

-- name: LookupDeviceLinkOwner :one
SELECT owner_id FROM device_links WHERE hash = sqlc.arg(hash);

-- name: SavePasskeyChallenge :exec
INSERT INTO passkey_challenges (hash, purpose, session, expires_at)
VALUES (sqlc.arg(hash), sqlc.arg(purpose), sqlc.arg(session), sqlc.arg(expires_at));

-- name: TakePasskeyChallenge :one
DELETE FROM passkey_challenges WHERE hash = sqlc.arg(hash) AND purpose = sqlc.arg(purpose)
RETURNING session, expires_at;

-- name: TrimPasskeyChallenges :exec
DELETE FROM passkey_challenges WHERE hash IN (
    SELECT c.hash FROM passkey_challenges c WHERE c.purpose = sqlc.arg(purpose)
    ORDER BY c.expires_at DESC, c.hash OFFSET sqlc.arg(keep)::int);

-- name: PurgePasskeyChallenges :exec
DELETE FROM passkey_challenges WHERE expires_at < sqlc.arg(now);
