-- name: CreateOAuthState :exec
INSERT INTO oauth_states (owner_id, state_hash, session_id, provider, verifier, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(state_hash), sqlc.arg(session_id), sqlc.arg(provider), sqlc.arg(verifier), sqlc.arg(expires_at));

-- name: DeleteStaleOAuthStates :exec
DELETE FROM oauth_states WHERE owner_id = sqlc.arg(owner_id) AND expires_at < now() - interval '1 day';

-- name: GetOAuthState :one
SELECT session_id, provider, verifier, expires_at, used_at FROM oauth_states
WHERE owner_id = sqlc.arg(owner_id) AND state_hash = sqlc.arg(state_hash)
FOR UPDATE;

-- name: UseOAuthState :execrows
UPDATE oauth_states SET used_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND state_hash = sqlc.arg(state_hash) AND used_at IS NULL;

-- name: UpsertOAuthGrant :exec
INSERT INTO oauth_grants (owner_id, provider, email, scopes, access_token, refresh_token, expires_at)
VALUES (sqlc.arg(owner_id), sqlc.arg(provider), sqlc.arg(email), sqlc.arg(scopes), sqlc.arg(access_token), sqlc.arg(refresh_token), sqlc.arg(expires_at))
ON CONFLICT (owner_id, provider) DO UPDATE SET email = EXCLUDED.email, scopes = EXCLUDED.scopes,
    access_token = EXCLUDED.access_token, refresh_token = EXCLUDED.refresh_token, expires_at = EXCLUDED.expires_at,
    status = 'connected', problem = '', notified_at = NULL, lease_id = NULL, lease_until = NULL, updated_at = now();

-- name: GetOAuthGrant :one
SELECT provider, email, scopes, access_token, refresh_token, expires_at, status, problem, notified_at, lease_id, lease_until, created_at
FROM oauth_grants WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider);

-- name: ListOAuthGrants :many
SELECT provider, email, scopes, access_token, refresh_token, expires_at, status, problem, notified_at, lease_id, lease_until, created_at
FROM oauth_grants WHERE owner_id = sqlc.arg(owner_id) ORDER BY provider;

-- name: LeaseOAuthGrant :one
UPDATE oauth_grants SET lease_id = sqlc.arg(lease_id), lease_until = now() + make_interval(secs => sqlc.arg(seconds)::float8)
WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider) AND status = 'connected'
  AND (lease_until IS NULL OR lease_until < now())
RETURNING access_token, refresh_token, expires_at;

-- name: RefreshedOAuthGrant :execrows
UPDATE oauth_grants SET access_token = sqlc.arg(access_token), refresh_token = sqlc.arg(refresh_token),
    expires_at = sqlc.arg(expires_at), lease_id = NULL, lease_until = NULL, updated_at = now()
WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider) AND lease_id = sqlc.arg(lease_id);

-- name: ReleaseOAuthGrant :exec
UPDATE oauth_grants SET lease_id = NULL, lease_until = NULL
WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider) AND lease_id = sqlc.arg(lease_id);

-- name: DisconnectOAuthGrant :one
WITH old AS (
    SELECT notified_at FROM oauth_grants
    WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider) FOR UPDATE
)
UPDATE oauth_grants g SET status = 'disconnected', problem = sqlc.arg(problem), lease_id = NULL, lease_until = NULL,
    notified_at = COALESCE(g.notified_at, now()), updated_at = now()
FROM old
WHERE g.owner_id = sqlc.arg(owner_id) AND g.provider = sqlc.arg(provider)
RETURNING (old.notified_at IS NULL)::boolean AS first_notice;

-- name: DeleteOAuthGrant :execrows
DELETE FROM oauth_grants WHERE owner_id = sqlc.arg(owner_id) AND provider = sqlc.arg(provider);
