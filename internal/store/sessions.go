package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/auth"
)

// WebSession is a signed-in browser of the web app (internal/webapp). The secret the browser
// holds is shown once, at sign-in; only its SHA-256 is stored.
type WebSession struct {
	ID        uuid.UUID
	UserAgent string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// SessionPrincipal is who a web session authenticates.
type SessionPrincipal struct {
	OwnerID   uuid.UUID
	OwnerName string
	SessionID uuid.UUID
	ExpiresAt time.Time
}

// sessionPrefix starts every session secret, like keyPrefix for API keys.
const sessionPrefix = "sws_"

// maxUserAgent is the longest user agent kept with a session (the column's check).
const maxUserAgent = 300

// Create starts a session for the owner that ends at expires, returning it and its secret
// (for the cookie; never stored).
func (t Sessions) Create(ctx context.Context, userAgent string, expires time.Time) (WebSession, string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return WebSession{}, "", fmt.Errorf("random session: %w", err)
	}
	secret := sessionPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	r, err := t.q.CreateWebSession(ctx, db.CreateWebSessionParams{OwnerID: t.ownerID, Hash: auth.Hash(secret),
		UserAgent: clip(userAgent, maxUserAgent), ExpiresAt: expires})
	if err != nil {
		return WebSession{}, "", notFound("create session", err)
	}
	return WebSession{ID: r.ID, UserAgent: r.UserAgent, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}, secret, nil
}

// List lists the owner's live sessions (not revoked, not expired), newest first.
func (t Sessions) List(ctx context.Context) ([]WebSession, error) {
	rows, err := t.q.ListWebSessions(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	out := make([]WebSession, len(rows))
	for i, r := range rows {
		out[i] = WebSession{ID: r.ID, UserAgent: r.UserAgent, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
	}
	return out, nil
}

// Revoke ends one of the owner's sessions (sign-out, or revocation from settings); an
// unknown, already revoked or another owner's session is ErrNotFound.
func (t Sessions) Revoke(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.RevokeWebSession(ctx, db.RevokeWebSessionParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("revoke session", n, err)
}

// LookupSession finds the live session of a secret, across owners (the browser's cookie is
// all a request carries); an unknown, revoked or expired session is ErrNotFound.
func (d *Door) LookupSession(ctx context.Context, secret string) (SessionPrincipal, error) {
	if !strings.HasPrefix(secret, sessionPrefix) || len(secret) > 200 {
		return SessionPrincipal{}, fmt.Errorf("session: %w", ErrNotFound)
	}
	r, err := db.New(d.conn()).LookupWebSession(ctx, auth.Hash(secret))
	if err != nil {
		return SessionPrincipal{}, notFound("session", err)
	}
	return SessionPrincipal{OwnerID: r.OwnerID, OwnerName: r.OwnerName, SessionID: r.ID, ExpiresAt: r.ExpiresAt}, nil
}

// clip keeps at most n bytes of s, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
