// Package oauth connects an owner's Google, Microsoft or other OAuth 2.0 account and keeps
// it connected (docs/MAIL.md "Google", "Microsoft", "your own identity provider";
// docs/ARCHITECTURE.md §15). The protocol is golang.org/x/oauth2's: the authorization-code
// flow with PKCE (S256) and a `state` bound to the web session that began it — the callback
// must come back to that session, within ten minutes, once; the code's exchange, refresh and
// the token endpoint's errors. Here: the grant's checks (a refresh token, an id_token made
// for this client naming an address, the scopes granted), the tokens sealed at rest
// (internal/secret), a refresh before expiry or after a 401 under a lease in Postgres so two
// processes never both spend a rotating refresh token, a grant the provider refuses marked
// disconnected and told to the owner once, and revocation at the provider on disconnect.
// No call to a provider is made inside a transaction.
package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Bounds of the flow and of a refresh.
const (
	// StateTTL is how long a sign-in may take, from the redirect to the callback.
	StateTTL = 10 * time.Minute
	// RefreshMargin: an access token expiring sooner is refreshed before use.
	RefreshMargin = 2 * time.Minute
	// LeaseTTL bounds one refresh; another process waits at most this long for it.
	LeaseTTL = 45 * time.Second
	// DefaultTimeout bounds each call to a provider.
	DefaultTimeout = 30 * time.Second
)

// Service is the owner's OAuth grants.
type Service struct {
	Store  *store.Store
	Sealer *secret.Sealer
	// Providers are the configured providers by name (Check passes for each).
	Providers map[string]Provider
	// RedirectURL is where providers send the owner back: STEWARD_PUBLIC_URL + CallbackPath.
	RedirectURL string
	// HTTP reaches the providers' endpoints (nil: a client with DefaultTimeout).
	HTTP *http.Client
	// Notified runs after a disconnection's notification committed (delivery), if set.
	Notified func(ctx context.Context, ownerID uuid.UUID)
	Now      steward.Clock
	// Wait is the pause between looks at a lease another process holds (nil: 200 ms).
	Wait func(ctx context.Context) error
}

// CallbackPath is the redirect URI's path.
const CallbackPath = "/oauth/callback"

func invalid(format string, a ...any) error { return steward.Errorf(steward.CodeInvalid, format, a...) }

// Provider returns a configured provider by name, or says in words that it is not.
func (s *Service) Provider(name string) (Provider, error) {
	if s == nil {
		return Provider{}, invalid("signing in with a provider is off on this server")
	}
	p, ok := s.Providers[name]
	if !ok {
		label := map[string]string{Google: "Google", Microsoft: "Microsoft"}[name]
		if label == "" {
			return Provider{}, steward.Errorf(steward.CodeNotFound, "there is no sign-in provider %q (google, microsoft or generic)", name)
		}
		return Provider{}, invalid("%s sign-in is not set up on this server: the operator sets STEWARD_OAUTH_%s_CLIENT_ID and STEWARD_OAUTH_%s_CLIENT_SECRET (docs/MAIL.md)",
			label, strings.ToUpper(name), strings.ToUpper(name))
	}
	return p, nil
}

// Configured lists the configured providers, Google, Microsoft, then the generic one.
func (s *Service) Configured() []Provider {
	if s == nil {
		return nil
	}
	var out []Provider
	for _, n := range []string{Google, Microsoft, Generic} {
		if p, ok := s.Providers[n]; ok {
			out = append(out, p)
		}
	}
	return out
}

func (s *Service) ctx(ctx context.Context) context.Context {
	hc := s.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

func hashState(state string) []byte { h := sha256.Sum256([]byte(state)); return h[:] }

// Begin starts a sign-in for the owner in the web session sessionID: it stores the state's
// hash and the PKCE verifier (sealed) and returns the provider's authorization URL.
func (s *Service) Begin(ctx context.Context, ownerID, sessionID uuid.UUID, provider string) (string, error) {
	p, err := s.Provider(provider)
	if err != nil {
		return "", err
	}
	if !s.Sealer.HasKey() {
		return "", invalid("this deployment has no STEWARD_SECRET_KEY, so tokens cannot be stored; ask the operator to set it")
	}
	if s.RedirectURL == "" {
		return "", invalid("this deployment has no STEWARD_PUBLIC_URL, so %s cannot send you back; ask the operator to set it", p.Label)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	state := base64.RawURLEncoding.EncodeToString(b)
	verifier := oauth2.GenerateVerifier()
	sealed, err := s.Sealer.Seal([]byte(verifier), ownerID[:])
	if err != nil {
		return "", err
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		return tx.OAuth.CreateState(ctx, hashState(state), sessionID, provider, sealed, s.Now.Now().Add(StateTTL))
	})
	if err != nil {
		return "", err
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	keys := make([]string, 0, len(p.Params))
	for k := range p.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		opts = append(opts, oauth2.SetAuthURLParam(k, p.Params[k]))
	}
	return p.Config(s.RedirectURL).AuthCodeURL(state, opts...), nil
}

// Grant is a connected grant as the accounts service needs it to make the owner's accounts.
type Grant struct {
	Provider Provider
	Email    string
}

// Callback is what the provider sent back: the state, and a code or an error.
type Callback struct {
	State, Code, Error, ErrorDescription string
}

// Finish completes a sign-in in the web session sessionID: the state must be one this
// session began, unused, in time; the code is exchanged (with the PKCE verifier) and the
// grant checked, then stored — with whatever inTx adds (the owner's accounts) in the same
// transaction. Every refusal is in words and stores nothing.
func (s *Service) Finish(ctx context.Context, ownerID, sessionID uuid.UUID, cb Callback, inTx func(*store.Tx, Grant) error) (Grant, error) {
	st, err := s.takeState(ctx, ownerID, sessionID, cb.State)
	if err != nil {
		return Grant{}, err
	}
	p, err := s.Provider(st.Provider)
	if err != nil {
		return Grant{}, err
	}
	if cb.Error != "" {
		if cb.Error == "access_denied" {
			return Grant{}, invalid("%s sign-in was cancelled (access was not granted); nothing was connected", p.Label)
		}
		return Grant{}, invalid("%s refused the sign-in: %s", p.Label, clip(cb.Error+" "+cb.ErrorDescription))
	}
	if cb.Code == "" || len(cb.Code) > 4096 {
		return Grant{}, invalid("%s sent no sign-in code back; start again from Settings → Mail and calendar", p.Label)
	}
	verifier, err := s.Sealer.Open(st.Verifier, ownerID[:])
	if err != nil {
		return Grant{}, invalid("this sign-in cannot be finished (was STEWARD_SECRET_KEY changed?): start again")
	}
	t, err := p.Config(s.RedirectURL).Exchange(s.ctx(ctx), cb.Code, oauth2.VerifierOption(string(verifier)))
	if err != nil {
		return Grant{}, exchangeError(p, err)
	}
	g, row, err := s.check(p, t, ownerID)
	if err != nil {
		return Grant{}, err
	}
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.OAuth.SaveGrant(ctx, row); err != nil {
			return err
		}
		if inTx != nil {
			return inTx(tx, g)
		}
		return nil
	})
	return g, err
}

// takeState checks and uses up a callback's state in a short transaction of its own: an
// unknown, another session's, used or expired state is refused in words (and a known one is
// used up, whatever follows, so it never serves twice).
func (s *Service) takeState(ctx context.Context, ownerID, sessionID uuid.UUID, state string) (store.OAuthState, error) {
	if state == "" || len(state) > 200 {
		return store.OAuthState{}, invalid("this sign-in came back without its state; start again from Settings → Mail and calendar")
	}
	var st store.OAuthState
	var refusal error
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		if st, err = tx.OAuth.State(ctx, hashState(state)); err != nil {
			return err
		}
		switch {
		case st.SessionID != sessionID:
			refusal = invalid("this sign-in was started in another session (another browser or device): start it again here, from Settings → Mail and calendar")
			return nil
		case st.Used:
			refusal = invalid("this sign-in was already used (a page reloaded or a link opened twice); it cannot connect anything again. Start again from Settings → Mail and calendar if you need to")
			return nil
		case s.Now.Now().After(st.ExpiresAt):
			refusal = invalid("this sign-in took longer than %s and has expired: start again from Settings → Mail and calendar", StateTTL)
		}
		return tx.OAuth.UseState(ctx, hashState(state))
	})
	if errors.Is(err, store.ErrNotFound) {
		return st, invalid("this sign-in is not one this session started (or it is too old): start again from Settings → Mail and calendar")
	}
	if err != nil {
		return st, err
	}
	return st, refusal
}

// exchangeError words a token endpoint's refusal of a code.
func exchangeError(p Provider, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode == "invalid_grant" {
			return invalid("%s refused the sign-in code (it was used already, expired, or was issued for another redirect address): start again from Settings → Mail and calendar; nothing was connected", p.Label)
		}
		if re.ErrorCode != "" {
			return invalid("%s refused the sign-in: %s; nothing was connected", p.Label, clip(re.ErrorCode+" "+re.ErrorDescription))
		}
		return invalid("%s's token endpoint answered HTTP %d with something that is not a token; nothing was connected", p.Label, statusOf(re))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return invalid("%s's token endpoint did not answer in time; nothing was connected", p.Label)
	}
	return invalid("%s's token endpoint could not be used (%s); nothing was connected", p.Label, clip(err.Error()))
}

func statusOf(re *oauth2.RetrieveError) int {
	if re.Response != nil {
		return re.Response.StatusCode
	}
	return 0
}

// check refuses a token response Steward cannot keep a connection with, and seals the rest.
func (s *Service) check(p Provider, t *oauth2.Token, ownerID uuid.UUID) (Grant, store.OAuthGrant, error) {
	if t.AccessToken == "" || len(t.AccessToken) > 8192 {
		return Grant{}, store.OAuthGrant{}, invalid("%s answered without a usable access token; nothing was connected", p.Label)
	}
	if t.RefreshToken == "" || len(t.RefreshToken) > 8192 {
		return Grant{}, store.OAuthGrant{}, invalid("%s gave no refresh token, so Steward could not stay connected past the hour; nothing was connected. Remove Steward's access in your %s account's security settings, then connect again", p.Label, p.Label)
	}
	idTok, _ := t.Extra("id_token").(string)
	who, err := p.readIDToken(idTok, s.Now.Now())
	if err != nil {
		return Grant{}, store.OAuthGrant{}, invalid("%s's answer is refused: %s; nothing was connected", p.Label, err.Error())
	}
	granted, _ := t.Extra("scope").(string)
	if missing := p.missingScopes(granted); len(missing) > 0 {
		return Grant{}, store.OAuthGrant{}, invalid("%s did not grant %s, which Steward needs; nothing was connected. Connect again and allow every permission listed", p.Label, strings.Join(missing, ", "))
	}
	if granted == "" {
		granted = strings.Join(p.Scopes, " ")
	}
	access, refresh, err := s.seal(ownerID, t)
	if err != nil {
		return Grant{}, store.OAuthGrant{}, err
	}
	return Grant{Provider: p, Email: who.Email}, store.OAuthGrant{Provider: p.Name, Email: who.Email, Scopes: clipN(granted, 2000),
		AccessToken: access, RefreshToken: refresh, ExpiresAt: s.expiry(t)}, nil
}

func (s *Service) seal(ownerID uuid.UUID, t *oauth2.Token) (access, refresh []byte, err error) {
	if access, err = s.Sealer.Seal([]byte(t.AccessToken), ownerID[:]); err != nil {
		return nil, nil, err
	}
	refresh, err = s.Sealer.Seal([]byte(t.RefreshToken), ownerID[:])
	return access, refresh, err
}

// expiry is when a token is to be treated as expired: as the provider said, else in an hour.
func (s *Service) expiry(t *oauth2.Token) time.Time {
	if t.Expiry.IsZero() {
		return s.Now.Now().Add(time.Hour)
	}
	return t.Expiry
}

func clip(s string) string { return clipN(strings.TrimSpace(strings.ToValidUTF8(s, "?")), 200) }

func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
