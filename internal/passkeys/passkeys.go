// Package passkeys is signing in with a passkey (WebAuthn, github.com/go-webauthn/webauthn) as
// a service (docs/ARCHITECTURE.md §13): an owner signed in registers passkeys, lists and
// removes them; anyone may then sign in with one, usernameless (a discoverable credential),
// into the same web session a key sign-in starts (internal/sessions).
//
// Each ceremony's challenge is kept server-side in PostgreSQL (migrations/00032_passkeys.sql),
// found by the SHA-256 of a random ceremony secret the browser holds (the web app keeps it in
// an HttpOnly cookie), taken once by its finish, and refused after CeremonyTTL: a ceremony a
// process began can finish in any other. A sign-in finds the credential's owner through the
// door (a read across owners: the credential id is all it carries), then verifies the
// assertion, moves the signature counter forward and starts the session in that owner's one
// transaction. An unknown credential, an assertion that does not verify and a counter that
// did not move forward are refused in words, and nothing is written.
package passkeys

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Door finds whose passkey a credential id is, across owners. *store.Door implements it.
type Door interface {
	LookupPasskeyOwner(ctx context.Context, credentialID []byte) (uuid.UUID, error)
}

// CeremonyTTL is how long a begun registration or sign-in may take to finish.
const CeremonyTTL = 5 * time.Minute

// MaxOpenCeremonies bounds the ceremonies of each kind (sign-in, registration) kept at once:
// a begin past it drops the oldest of its kind, so strangers beginning sign-ins from many
// addresses cannot grow the table, and only a flood of more than this many begins within one
// person's ceremony (seconds) could push theirs out (docs/ARCHITECTURE.md §12).
const MaxOpenCeremonies = 1000

// MaxName is the longest name of a passkey, in characters.
const MaxName = 100

// Service registers passkeys and signs in with them. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	Door  Door
	// RPID and Origin are the relying party (config.Config.PasskeyRPID, PasskeyOrigin); an
	// empty RPID means passkeys are off on this deployment.
	RPID, Origin string
	// Now is the clock of the ceremonies and of last use; nil means time.Now.
	Now steward.Clock

	once sync.Once
	wa   *webauthn.WebAuthn
	err  error
}

// The refusals a person can meet, in words; each says what happened and what to do.
var (
	ErrOff      = steward.Errorf(steward.CodeNotFound, "Passkeys are off on this server: its operator has not set a passkey origin (STEWARD_PASSKEY_ORIGIN).")
	errCeremony = steward.Errorf(steward.CodeConflict, "This passkey request expired or was already used. Try again.")
	errUnknown  = steward.Errorf(steward.CodeUnauthorized, "This passkey is not registered with Steward (it may have been removed). Sign in with your key, then add it again in Settings.")
	errVerify   = steward.Errorf(steward.CodeUnauthorized, "This passkey's answer could not be verified, so nobody was signed in. Try again.")
	errCounter  = steward.Errorf(steward.CodeUnauthorized, "This passkey was refused: its signature counter went backwards, which happens when a passkey has been copied. "+
		"Sign in with your key, then remove this passkey in Settings and add it again.")
	errTaken   = steward.Errorf(steward.CodeConflict, "This passkey is already registered.")
	errAnswer  = steward.Errorf(steward.CodeInvalid, "The browser's passkey answer could not be read. Try again.")
	errCreated = steward.Errorf(steward.CodeInvalid, "The new passkey could not be verified, so it was not added. Try again.")
)

// Enabled reports whether passkeys are on (a relying party ID is configured).
func (s *Service) Enabled() bool { return s != nil && s.RPID != "" }

// relyingParty builds the library's relying party once. Its own clock is not used: a
// ceremony's expiry is this service's (CeremonyTTL, on Now).
func (s *Service) relyingParty() (*webauthn.WebAuthn, error) {
	if !s.Enabled() {
		return nil, ErrOff
	}
	s.once.Do(func() {
		s.wa, s.err = webauthn.New(&webauthn.Config{
			RPID: s.RPID, RPDisplayName: "Steward", RPOrigins: []string{s.Origin},
			AuthenticatorSelection: protocol.AuthenticatorSelection{
				ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
				UserVerification: protocol.VerificationPreferred,
			},
			Timeouts: webauthn.TimeoutsConfig{
				Login:        webauthn.TimeoutConfig{Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
				Registration: webauthn.TimeoutConfig{Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
			},
		})
	})
	return s.wa, s.err
}

// user is an owner as the library sees one: the user handle is the owner's id (16 random
// bytes, no personal data), the same for every passkey of theirs.
type user struct {
	id    uuid.UUID
	name  string
	creds []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return u.id[:] }
func (u *user) WebAuthnName() string                       { return u.name }
func (u *user) WebAuthnDisplayName() string                { return u.name }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func toCredential(p store.Passkey) webauthn.Credential {
	ts := make([]protocol.AuthenticatorTransport, len(p.Transports))
	for i, t := range p.Transports {
		ts[i] = protocol.AuthenticatorTransport(t)
	}
	return webauthn.Credential{ID: p.CredentialID, PublicKey: p.PublicKey, AttestationType: p.AttestationType, Transport: ts,
		Flags:         webauthn.NewCredentialFlags(protocol.AuthenticatorFlags(p.Flags)),
		Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount}}
}

// ownerUser reads the owner's passkeys into a user, in tx.
func ownerUser(ctx context.Context, tx *store.Tx, ownerID uuid.UUID, name string) (*user, error) {
	keys, err := tx.Passkeys.List(ctx)
	if err != nil {
		return nil, err
	}
	u := &user{id: ownerID, name: name}
	for _, k := range keys {
		u.creds = append(u.creds, toCredential(k))
	}
	return u, nil
}

// Ceremony is a begun registration or sign-in: Options for the browser
// (navigator.credentials.create or get, in the WebAuthn JSON form) and the Secret that
// finishes it, which the browser must keep to itself (an HttpOnly cookie).
type Ceremony struct {
	Options json.RawMessage
	Secret  string
}

// begin stores the session data of a ceremony under a new secret's hash.
func (s *Service) begin(ctx context.Context, purpose string, options any, session *webauthn.SessionData) (Ceremony, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return Ceremony{}, err
	}
	data, err := json.Marshal(session)
	if err != nil {
		return Ceremony{}, err
	}
	secret := rand.Text() + rand.Text()
	now := s.Now.Now()
	if err := s.Store.SaveChallenge(ctx, auth.Hash(secret), purpose, data, now.Add(CeremonyTTL), now, MaxOpenCeremonies); err != nil {
		return Ceremony{}, err
	}
	return Ceremony{Options: opts, Secret: secret}, nil
}

// take takes a ceremony once: an unknown, used or expired one is errCeremony.
func (s *Service) take(ctx context.Context, purpose, secret string) (webauthn.SessionData, error) {
	var sd webauthn.SessionData
	if secret == "" || len(secret) > 200 {
		return sd, errCeremony
	}
	data, expires, err := s.Store.TakeChallenge(ctx, auth.Hash(secret), purpose)
	if errors.Is(err, store.ErrNotFound) {
		return sd, errCeremony
	}
	if err != nil {
		return sd, err
	}
	if !s.Now.Now().Before(expires) {
		return sd, errCeremony
	}
	if err := json.Unmarshal(data, &sd); err != nil {
		return sd, fmt.Errorf("passkey ceremony: %w", err)
	}
	return sd, nil
}

// BeginRegistration starts registering a new passkey for the owner: a discoverable
// credential (so it can sign in without a name), excluding the ones already registered.
func (s *Service) BeginRegistration(ctx context.Context, ownerID uuid.UUID, ownerName string) (Ceremony, error) {
	wa, err := s.relyingParty()
	if err != nil {
		return Ceremony{}, err
	}
	var u *user
	if err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		u, err = ownerUser(ctx, tx, ownerID, ownerName)
		return err
	}); err != nil {
		return Ceremony{}, err
	}
	exclude := make([]protocol.CredentialDescriptor, len(u.creds))
	for i, c := range u.creds {
		exclude[i] = c.Descriptor()
	}
	creation, session, err := wa.BeginRegistration(u, webauthn.WithExclusions(exclude),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired))
	if err != nil {
		return Ceremony{}, fmt.Errorf("begin passkey registration: %w", err)
	}
	return s.begin(ctx, store.ChallengeRegister, creation, session)
}

// FinishRegistration verifies the browser's attestation (answer: the PublicKeyCredential's
// JSON) against the owner's ceremony and stores the passkey under name.
func (s *Service) FinishRegistration(ctx context.Context, ownerID uuid.UUID, ownerName, secret, name string, answer []byte) (store.Passkey, error) {
	wa, err := s.relyingParty()
	if err != nil {
		return store.Passkey{}, err
	}
	if name, err = steward.CheckName("The passkey's name", name, MaxName); err != nil {
		return store.Passkey{}, err
	}
	session, err := s.take(ctx, store.ChallengeRegister, secret)
	if err != nil {
		return store.Passkey{}, err
	}
	u := &user{id: ownerID, name: ownerName}
	if string(session.UserID) != string(u.WebAuthnID()) {
		return store.Passkey{}, errCeremony // another owner's ceremony
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(answer)
	if err != nil {
		return store.Passkey{}, errAnswer
	}
	cred, err := wa.CreateCredential(u, session, parsed)
	if err != nil {
		return store.Passkey{}, fmt.Errorf("%w (%w)", errCreated, err)
	}
	ts := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		if len(ts) < 8 && len(t) <= 32 {
			ts = append(ts, string(t))
		}
	}
	var out store.Passkey
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		out, err = tx.Passkeys.Create(ctx, store.Passkey{CredentialID: cred.ID, PublicKey: cred.PublicKey,
			AttestationType: cred.AttestationType, AAGUID: cred.Authenticator.AAGUID, SignCount: cred.Authenticator.SignCount,
			Flags: byte(cred.Flags.ProtocolValue()), Transports: ts, Name: name})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return store.Passkey{}, errTaken
	}
	return out, err
}

// List lists the owner's passkeys, oldest first.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]store.Passkey, error) {
	var out []store.Passkey
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		out, err = tx.Passkeys.List(ctx)
		return err
	})
	return out, err
}

// Remove removes one of the owner's passkeys: it no longer signs anyone in.
func (s *Service) Remove(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Passkeys.Delete(ctx, id) })
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "There is no such passkey (it may have been removed already).")
	}
	return err
}

// BeginSignIn starts a usernameless sign-in: the browser offers the passkeys it holds for
// this relying party.
func (s *Service) BeginSignIn(ctx context.Context) (Ceremony, error) {
	wa, err := s.relyingParty()
	if err != nil {
		return Ceremony{}, err
	}
	assertion, session, err := wa.BeginDiscoverableLogin()
	if err != nil {
		return Ceremony{}, fmt.Errorf("begin passkey sign-in: %w", err)
	}
	return s.begin(ctx, store.ChallengeSignIn, assertion, session)
}

// SignedIn is a session a passkey started: its owner, and the session's secret for the cookie.
type SignedIn struct {
	OwnerID uuid.UUID
	Session store.WebSession
	Secret  string
}

// FinishSignIn verifies the browser's assertion (answer: the PublicKeyCredential's JSON)
// against the sign-in ceremony of secret and, when it verifies and the signature counter
// moved forward, starts a web session of ttl for its owner.
func (s *Service) FinishSignIn(ctx context.Context, secret string, answer []byte, userAgent string, ttl time.Duration) (SignedIn, error) {
	wa, err := s.relyingParty()
	if err != nil {
		return SignedIn{}, err
	}
	session, err := s.take(ctx, store.ChallengeSignIn, secret)
	if err != nil {
		return SignedIn{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(answer)
	if err != nil {
		return SignedIn{}, errAnswer
	}
	ownerID, err := s.Door.LookupPasskeyOwner(ctx, parsed.RawID)
	if errors.Is(err, store.ErrNotFound) {
		return SignedIn{}, errUnknown
	}
	if err != nil {
		return SignedIn{}, err
	}
	out := SignedIn{OwnerID: ownerID}
	now := s.Now.Now()
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		u, err := ownerUser(ctx, tx, ownerID, "")
		if err != nil {
			return err
		}
		_, cred, err := wa.ValidatePasskeyLogin(func(_, handle []byte) (webauthn.User, error) {
			if string(handle) != string(u.WebAuthnID()) {
				return nil, errUnknown
			}
			return u, nil
		}, session, parsed)
		var unknown *protocol.ErrorUnknownCredential
		switch {
		case errors.As(err, &unknown) || errors.Is(err, errUnknown):
			return errUnknown
		case err != nil:
			return fmt.Errorf("%w (%w)", errVerify, err)
		case cred.Authenticator.CloneWarning:
			return errCounter
		}
		if err := tx.Passkeys.Use(ctx, cred.ID, cred.Authenticator.SignCount, byte(cred.Flags.ProtocolValue()), now); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return errCounter
			}
			return err
		}
		out.Session, out.Secret, err = tx.Sessions.Create(ctx, userAgent, now.Add(ttl))
		return err
	})
	if err != nil {
		return SignedIn{}, err
	}
	return out, nil
}
