package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/db"
)

// Passkeys are the owner's WebAuthn credentials (migrations/00032_passkeys.sql,
// docs/ARCHITECTURE.md §13); DeviceLinks the owner's one-time sign-in links for another device.
type (
	Passkeys    struct{ *conn }
	DeviceLinks struct{ *conn }
)

// Passkey is a registered WebAuthn credential: what verifying an assertion needs, and what
// the owner sees of it.
type Passkey struct {
	ID              uuid.UUID
	CredentialID    []byte
	PublicKey       []byte
	AttestationType string
	AAGUID          []byte
	SignCount       uint32
	// Flags is the authenticator data's flags byte at registration, updated at each use.
	Flags      byte
	Transports []string
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

func toPasskey(r db.Passkey) Passkey {
	return Passkey{ID: r.ID, CredentialID: r.CredentialID, PublicKey: r.PublicKey, AttestationType: r.AttestationType,
		AAGUID: r.Aaguid, SignCount: uint32(r.SignCount), Flags: byte(r.Flags), Transports: r.Transports, Name: r.Name,
		CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt}
}

// Create stores a passkey; a credential id already registered (by anyone) is ErrConflict.
func (t Passkeys) Create(ctx context.Context, p Passkey) (Passkey, error) {
	if p.Transports == nil {
		p.Transports = []string{}
	}
	if p.AAGUID == nil {
		p.AAGUID = []byte{}
	}
	r, err := t.q.CreatePasskey(ctx, db.CreatePasskeyParams{OwnerID: t.ownerID, CredentialID: p.CredentialID, PublicKey: p.PublicKey,
		AttestationType: p.AttestationType, Aaguid: p.AAGUID, SignCount: int64(p.SignCount), Flags: int16(p.Flags),
		Transports: p.Transports, Name: p.Name})
	if err != nil {
		return Passkey{}, notFound("create passkey", err)
	}
	return toPasskey(r), nil
}

// List lists the owner's passkeys, oldest first.
func (t Passkeys) List(ctx context.Context) ([]Passkey, error) {
	rows, err := t.q.ListPasskeys(ctx, t.ownerID)
	if err != nil {
		return nil, fmt.Errorf("list passkeys: %w", err)
	}
	out := make([]Passkey, len(rows))
	for i, r := range rows {
		out[i] = toPasskey(r)
	}
	return out, nil
}

// Delete removes one of the owner's passkeys; another owner's or an unknown one is ErrNotFound.
func (t Passkeys) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeletePasskey(ctx, db.DeletePasskeyParams{OwnerID: t.ownerID, ID: id})
	return rowsOrNotFound("delete passkey", n, err)
}

// Use records a verified sign-in with the owner's passkey: its new signature counter and
// flags, at now. A counter that did not move forward (a cloned authenticator, or the same
// assertion twice) changes nothing and is ErrConflict; an unknown credential is ErrConflict too.
func (t Passkeys) Use(ctx context.Context, credentialID []byte, signCount uint32, flags byte, now time.Time) error {
	n, err := t.q.UsePasskey(ctx, db.UsePasskeyParams{OwnerID: t.ownerID, CredentialID: credentialID,
		SignCount: int64(signCount), Flags: int16(flags), Now: now})
	if err != nil {
		return notFound("use passkey", err)
	}
	if n == 0 {
		return fmt.Errorf("use passkey: the signature counter did not move forward: %w", ErrConflict)
	}
	return nil
}

// LookupPasskeyOwner finds whose passkey a credential id is, across owners (a passkey
// sign-in carries nothing else); an unknown id is ErrNotFound. The door reads only
// (owner_id, credential_id).
func (d *Door) LookupPasskeyOwner(ctx context.Context, credentialID []byte) (uuid.UUID, error) {
	if len(credentialID) == 0 || len(credentialID) > 1023 {
		return uuid.Nil, fmt.Errorf("passkey: %w", ErrNotFound)
	}
	id, err := db.New(d.conn()).LookupPasskeyOwner(ctx, credentialID)
	if err != nil {
		return uuid.Nil, notFound("passkey", err)
	}
	return id, nil
}

// DeviceLink is a one-time sign-in link of the owner's (its token is never stored).
type DeviceLink struct {
	ID        uuid.UUID
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// Create stores a device link by its token's hash.
func (t DeviceLinks) Create(ctx context.Context, hash []byte, expires time.Time) (DeviceLink, error) {
	r, err := t.q.CreateDeviceLink(ctx, db.CreateDeviceLinkParams{OwnerID: t.ownerID, Hash: hash, ExpiresAt: expires})
	if err != nil {
		return DeviceLink{}, notFound("create device link", err)
	}
	return DeviceLink(r), nil
}

// Get reads the owner's device link of a token hash; another owner's or an unknown one is
// ErrNotFound.
func (t DeviceLinks) Get(ctx context.Context, hash []byte) (DeviceLink, error) {
	r, err := t.q.GetDeviceLink(ctx, db.GetDeviceLinkParams{OwnerID: t.ownerID, Hash: hash})
	if err != nil {
		return DeviceLink{}, notFound("device link", err)
	}
	return DeviceLink(r), nil
}

// Use marks the owner's device link used at now, once and before it expires; else ErrNotFound.
func (t DeviceLinks) Use(ctx context.Context, hash []byte, now time.Time) error {
	n, err := t.q.UseDeviceLink(ctx, db.UseDeviceLinkParams{OwnerID: t.ownerID, Hash: hash, Now: now})
	return rowsOrNotFound("use device link", n, err)
}

// LookupDeviceLinkOwner finds whose device link a token hash is, across owners; an unknown
// hash is ErrNotFound. The door reads only (owner_id, hash).
func (d *Door) LookupDeviceLinkOwner(ctx context.Context, hash []byte) (uuid.UUID, error) {
	if len(hash) != 32 {
		return uuid.Nil, fmt.Errorf("device link: %w", ErrNotFound)
	}
	id, err := db.New(d.conn()).LookupDeviceLinkOwner(ctx, hash)
	if err != nil {
		return uuid.Nil, notFound("device link", err)
	}
	return id, nil
}

// Challenge purposes: a passkey's registration (an owner signed in) or a sign-in (nobody yet).
const (
	ChallengeRegister = "register"
	ChallengeSignIn   = "signin"
)

// SaveChallenge stores a WebAuthn ceremony under way (session: the library's JSON session
// data) by the hash of the browser's ceremony secret, until expires; in the same transaction
// it drops the ceremonies that expired before now and, of its purpose, all but the newest
// open-1, so the table stays small whoever begins ceremonies. A ceremony has no owner (a
// sign-in begins before anyone is known), so this runs outside any owner transaction
// (migrations/00032_passkeys.sql).
func (s *Store) SaveChallenge(ctx context.Context, hash []byte, purpose string, session []byte, expires, now time.Time, open int) error {
	return inTx(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.PurgePasskeyChallenges(ctx, now); err != nil {
			return fmt.Errorf("purge passkey challenges: %w", err)
		}
		if err := q.TrimPasskeyChallenges(ctx, db.TrimPasskeyChallengesParams{Purpose: purpose, Keep: int32(max(0, open-1))}); err != nil {
			return fmt.Errorf("trim passkey challenges: %w", err)
		}
		if err := q.SavePasskeyChallenge(ctx, db.SavePasskeyChallengeParams{Hash: hash, Purpose: purpose, Session: session, ExpiresAt: expires}); err != nil {
			return notFound("save passkey challenge", err)
		}
		return nil
	})
}

// TakeChallenge removes and returns the ceremony of a hash and purpose, with its expiry: it
// can be taken once. An unknown (or already taken) one is ErrNotFound.
func (s *Store) TakeChallenge(ctx context.Context, hash []byte, purpose string) ([]byte, time.Time, error) {
	r, err := db.New(retrying{s.pool}).TakePasskeyChallenge(ctx, db.TakePasskeyChallengeParams{Hash: hash, Purpose: purpose})
	if err != nil {
		return nil, time.Time{}, notFound("passkey challenge", err)
	}
	return r.Session, r.ExpiresAt, nil
}
