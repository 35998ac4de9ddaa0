package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/calendar"
	smail "github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Accounts connected by signing in with a provider (internal/oauth, docs/MAIL.md "Google",
// "Microsoft"): the grant makes the mail account (and the calendar, where the provider has
// CalDAV) in the same transaction; each use takes a fresh access token, and a server's refusal
// of it refreshes it once and tries again.

// Providers are the sign-in providers this deployment has, with what each may do.
func (s *Service) Providers() []oauth.Provider { return s.OAuth.Configured() }

// Grants are the owner's sign-ins with providers and whether each still works.
func (s *Service) Grants(ctx context.Context, ownerID uuid.UUID) ([]oauth.View, error) {
	return s.OAuth.Grants(ctx, ownerID)
}

// BeginOAuth starts signing in with a provider from the web session sessionID: the URL to
// send the owner to.
func (s *Service) BeginOAuth(ctx context.Context, ownerID, sessionID uuid.UUID, provider string) (string, error) {
	return s.OAuth.Begin(ctx, ownerID, sessionID, provider)
}

// Connected is what a sign-in connected.
type Connected struct {
	Label, Email string
	// Kinds are the accounts made or kept with the grant; Kept those left as they were (an
	// account of that kind with a password was connected already).
	Kinds, Kept []string
}

// FinishOAuth completes a sign-in (its checks: internal/oauth) and makes the owner's mail and
// calendar accounts of the grant, unless one of that kind with a password is there.
func (s *Service) FinishOAuth(ctx context.Context, ownerID, sessionID uuid.UUID, cb oauth.Callback) (Connected, error) {
	var out Connected
	g, err := s.OAuth.Finish(ctx, ownerID, sessionID, cb, func(tx *store.Tx, g oauth.Grant) error {
		out = Connected{}
		p := g.Provider
		if p.IMAPURL != "" {
			a := smail.Account{IMAPURL: p.IMAPURL, SMTPURL: p.SMTPURL, Username: g.Email, From: g.Email, OAuth: p.Name, SASL: p.SASL}
			if err := s.ensure(ctx, tx, ownerID, Mail, p.Name, a, &out); err != nil {
				return err
			}
		}
		if p.CalDAVURL != "" {
			u := strings.ReplaceAll(p.CalDAVURL, "{email}", g.Email)
			a := calendar.Account{URL: u, Username: g.Email, TimeZone: "UTC", Calendar: pathOf(u), OAuth: p.Name}
			if err := s.ensure(ctx, tx, ownerID, Calendar, p.Name, a, &out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Connected{}, err
	}
	out.Label, out.Email = g.Provider.Label, g.Email
	return out, nil
}

// ensure makes the account of kind for provider, or keeps the one there: the provider's own
// (a reconnect) is replaced, one with a password is left alone.
func (s *Service) ensure(ctx context.Context, tx *store.Tx, ownerID uuid.UUID, kind, provider string, settings any, out *Connected) error {
	row, err := tx.Accounts.Get(ctx, kind)
	switch {
	case err == nil && providerOf(row) != provider:
		out.Kept = append(out.Kept, kind)
		return nil
	case err == nil:
		if err := tx.Accounts.Delete(ctx, kind); err != nil {
			return err
		}
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	sealed, err := s.Sealer.Seal([]byte("oauth:"+provider), ownerID[:])
	if err != nil {
		return err
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return err
	}
	if _, err := tx.Accounts.Create(ctx, store.StoredAccount{Kind: kind, Settings: raw, Secret: sealed}); err != nil {
		return err
	}
	out.Kinds = append(out.Kinds, kind)
	return nil
}

// providerOf is the provider an account signs in with ("" : a password).
func providerOf(r store.StoredAccount) string {
	var v struct {
		OAuth string `json:"oauth"`
	}
	_ = json.Unmarshal(r.Settings, &v)
	return v.OAuth
}

// DisconnectOAuth revokes the owner's grant at the provider and deletes it with the accounts
// it made; note says what the owner must still do when the revocation could not be made.
func (s *Service) DisconnectOAuth(ctx context.Context, ownerID uuid.UUID, provider string) (string, error) {
	return s.OAuth.Disconnect(ctx, ownerID, provider, func(tx *store.Tx) error {
		rows, err := tx.Accounts.List(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if providerOf(r) == provider {
				if err := tx.Accounts.Delete(ctx, r.Kind); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// token gives an account that signs in with a provider its access token (stale: the one a
// server just refused, to be refreshed).
func (s *Service) token(ctx context.Context, ownerID uuid.UUID, provider, stale string) (string, error) {
	if s.OAuth == nil {
		return "", steward.Errorf(steward.CodeInvalid, "this account signs in with %s, which is off on this server: remove it", provider)
	}
	return s.OAuth.Token(ctx, ownerID, provider, stale)
}

// withMail runs fn with the owner's mail account; a token the server refused is refreshed
// once and fn runs again (a refused login sent nothing).
func withMail[T any](ctx context.Context, s *Service, ownerID uuid.UUID, fn func(smail.Account) (T, error)) (T, error) {
	a, err := s.mailAccount(ctx, ownerID)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(a)
	if a.OAuth != "" && errors.Is(err, smail.ErrTokenRefused) {
		if a.Token, err = s.token(ctx, ownerID, a.OAuth, a.Token); err != nil {
			return v, err
		}
		v, err = fn(a)
	}
	return v, err
}

// withCalendar is withMail's twin for the calendar account.
func withCalendar[T any](ctx context.Context, s *Service, ownerID uuid.UUID, fn func(calendar.Account) (T, error)) (T, error) {
	a, err := s.calendarAccount(ctx, ownerID)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(a)
	if a.OAuth != "" && errors.Is(err, calendar.ErrTokenRefused) {
		if a.Token, err = s.token(ctx, ownerID, a.OAuth, a.Token); err != nil {
			return v, err
		}
		v, err = fn(a)
	}
	return v, err
}

// pathOf is a URL's path (the calendar a provider's CalDAV URL names).
func pathOf(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Path
	}
	return ""
}
