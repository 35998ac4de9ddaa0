// Package sessions is the owner's web sessions as a service: start one at sign-in, list the
// live ones, revoke one (sign-out, or from settings). Only the secret's hash is stored
// (internal/store, migrations/00012_web_sessions.sql); finding the session of a cookie crosses
// owners and stays with the read-only door (docs/ARCHITECTURE.md §5, §7).
package sessions

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"
)

// Service starts, lists and revokes an owner's web sessions. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	// Now is the clock a new session's expiry counts from; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Start starts a session for the owner that lasts ttl, returning it and its secret (for the
// cookie; never stored).
func (s *Service) Start(ctx context.Context, ownerID uuid.UUID, userAgent string, ttl time.Duration) (store.WebSession, string, error) {
	var sess store.WebSession
	var secret string
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		sess, secret, err = tx.Sessions.Create(ctx, userAgent, s.now().Add(ttl))
		return err
	})
	return sess, secret, err
}

// List lists the owner's live sessions, newest first.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]store.WebSession, error) {
	var out []store.WebSession
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		out, err = tx.Sessions.List(ctx)
		return err
	})
	return out, err
}

// Revoke ends one of the owner's sessions; an unknown, already revoked or another owner's
// session is store.ErrNotFound.
func (s *Service) Revoke(ctx context.Context, ownerID, id uuid.UUID) error {
	return s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		return tx.Sessions.Revoke(ctx, id)
	})
}
