// Package sessions is the owner's web sessions as a service: start one at sign-in, list the
// live ones, revoke one (sign-out, or from settings). Only the secret's hash is stored
// (internal/store, migrations/00012_web_sessions.sql); finding the session of a cookie crosses
// owners and stays with the read-only door (docs/ARCHITECTURE.md §5, §7).
//
// A device link (Settings → Add a device) starts a session on another device: a random
// token, stored only as its SHA-256 (migrations/00032_passkeys.sql), that works once within
// DeviceLinkTTL. Its page finds the owner through the door; using it marks it used and starts
// the session in one owner transaction, so two uses racing start one session
// (docs/ARCHITECTURE.md §13).
package sessions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Door finds whose device link a token's hash is, across owners. *store.Door implements it.
type Door interface {
	LookupDeviceLinkOwner(ctx context.Context, hash []byte) (uuid.UUID, error)
}

// Service starts, lists and revokes an owner's web sessions. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	// Door finds a device link's owner; nil refuses every device link as unknown.
	Door Door
	// Now is the clock a new session's expiry counts from; nil means time.Now.
	Now steward.Clock
}

// Start starts a session for the owner that lasts ttl, returning it and its secret (for the
// cookie; never stored).
func (s *Service) Start(ctx context.Context, ownerID uuid.UUID, userAgent string, ttl time.Duration) (store.WebSession, string, error) {
	var sess store.WebSession
	var secret string
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		sess, secret, err = tx.Sessions.Create(ctx, userAgent, s.Now.Now().Add(ttl))
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

// DeviceLinkTTL is how long a device link works.
const DeviceLinkTTL = 10 * time.Minute

// The refusals of a device link, in words.
var (
	errLinkUnknown = steward.Errorf(steward.CodeNotFound, "This sign-in link is not valid, so nobody was signed in. "+
		"Make a new one in Settings → Add a device, on a device where you are signed in.")
	errLinkUsed = steward.Errorf(steward.CodeConflict, "This sign-in link was already used, and it works only once, so nobody was signed in. "+
		"Make a new one in Settings → Add a device, on a device where you are signed in.")
	errLinkExpired = steward.Errorf(steward.CodeConflict, "This sign-in link has expired (it works for 10 minutes), so nobody was signed in. "+
		"Make a new one in Settings → Add a device, on a device where you are signed in.")
)

// NewDeviceLink makes a device link of the owner's, returning its token (for the link; never
// stored) and the link.
func (s *Service) NewDeviceLink(ctx context.Context, ownerID uuid.UUID) (string, store.DeviceLink, error) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	token := base64.RawURLEncoding.EncodeToString(b[:])
	var link store.DeviceLink
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		link, err = tx.DeviceLinks.Create(ctx, auth.Hash(token), s.Now.Now().Add(DeviceLinkTTL))
		return err
	})
	return token, link, err
}

// DeviceLink reads the owner's device link of a token (settings shows whether it was used).
func (s *Service) DeviceLink(ctx context.Context, ownerID uuid.UUID, token string) (store.DeviceLink, error) {
	var link store.DeviceLink
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		link, err = tx.DeviceLinks.Get(ctx, auth.Hash(token))
		return err
	})
	return link, err
}

// CheckDeviceLink says whether a device link can still sign a device in; it changes nothing.
// A link that cannot (unknown, used, expired) is a steward.Error whose message says so.
func (s *Service) CheckDeviceLink(ctx context.Context, token string) error {
	_, _, err := s.findLink(ctx, token)
	return err
}

// findLink finds a link's owner and reads it, refusing one that cannot sign in.
func (s *Service) findLink(ctx context.Context, token string) (uuid.UUID, store.DeviceLink, error) {
	if s.Door == nil || len(token) != 43 {
		return uuid.Nil, store.DeviceLink{}, errLinkUnknown
	}
	h := auth.Hash(token)
	owner, err := s.Door.LookupDeviceLinkOwner(ctx, h)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, store.DeviceLink{}, errLinkUnknown
	}
	if err != nil {
		return uuid.Nil, store.DeviceLink{}, err
	}
	var link store.DeviceLink
	err = s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		link, err = tx.DeviceLinks.Get(ctx, h)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return uuid.Nil, link, errLinkUnknown
	case err != nil:
		return uuid.Nil, link, err
	case link.UsedAt != nil:
		return owner, link, errLinkUsed
	case !s.Now.Now().Before(link.ExpiresAt):
		return owner, link, errLinkExpired
	}
	return owner, link, nil
}

// UseDeviceLink signs a device in with a link: the link is marked used and a session of ttl
// started in one owner transaction, once. It returns the owner, the session and its secret.
func (s *Service) UseDeviceLink(ctx context.Context, token, userAgent string, ttl time.Duration) (uuid.UUID, store.WebSession, string, error) {
	owner, _, err := s.findLink(ctx, token)
	if err != nil {
		return uuid.Nil, store.WebSession{}, "", err
	}
	var sess store.WebSession
	var secret string
	now := s.Now.Now()
	err = s.Store.WithOwner(ctx, owner, func(tx *store.Tx) error {
		if err := tx.DeviceLinks.Use(ctx, auth.Hash(token), now); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return errLinkUsed // used (or expired) since findLink read it
			}
			return err
		}
		var err error
		sess, secret, err = tx.Sessions.Create(ctx, userAgent, now.Add(ttl))
		return err
	})
	if err != nil {
		return uuid.Nil, store.WebSession{}, "", err
	}
	return owner, sess, secret, nil
}
