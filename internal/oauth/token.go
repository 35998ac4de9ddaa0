package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// ReasonDisconnected is the Reason of an error saying a grant needs to be connected again.
const ReasonDisconnected = "disconnected"

// IsDisconnected reports whether err says a grant needs to be connected again.
func IsDisconnected(err error) bool {
	var se *steward.Error
	return errors.As(err, &se) && se.Reason == ReasonDisconnected
}

// disconnected is the words for a grant its provider refused.
func disconnected(p Provider, email string) error {
	e := steward.Errorf(steward.CodeInvalid, "your %s account %s needs to be reconnected: %s no longer accepts Steward's access (it was revoked, expired or the password changed). Open Settings → Mail and calendar and choose Reconnect %s",
		p.Label, email, p.Label, p.Label)
	e.Reason = ReasonDisconnected
	return e
}

// Token returns a usable access token of the owner's grant of provider: the stored one while
// it has more than RefreshMargin to live and is not stale (the token a server just refused
// with a 401: then it is refreshed once). A refresh runs under the grant's lease; a process
// that finds the lease held waits for the holder's token instead of spending the refresh
// token again.
func (s *Service) Token(ctx context.Context, ownerID uuid.UUID, provider, stale string) (string, error) {
	p, err := s.Provider(provider)
	if err != nil {
		return "", err
	}
	deadline := s.Now.Now().Add(LeaseTTL + 5*time.Second)
	for {
		g, err := s.grant(ctx, ownerID, p)
		if err != nil {
			return "", err
		}
		if g.Status != "connected" {
			return "", disconnected(p, g.Email)
		}
		access, err := s.Sealer.Open(g.AccessToken, ownerID[:])
		if err != nil {
			return "", invalid("the %s account's token cannot be opened (was STEWARD_SECRET_KEY changed?): reconnect %s in Settings → Mail and calendar", p.Label, p.Label)
		}
		if string(access) != stale && g.ExpiresAt.After(s.Now.Now().Add(RefreshMargin)) {
			return string(access), nil
		}
		tok, ok, err := s.refresh(ctx, ownerID, p, g.Email, stale)
		if err != nil || ok {
			return tok, err
		}
		if s.Now.Now().After(deadline) {
			return "", steward.Errorf(steward.CodeUnavailable, "another request has been refreshing the %s account's access for too long; try again in a minute", p.Label)
		}
		if err := s.wait(ctx); err != nil {
			return "", err
		}
	}
}

func (s *Service) wait(ctx context.Context) error {
	if s.Wait != nil {
		return s.Wait(ctx)
	}
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Service) grant(ctx context.Context, ownerID uuid.UUID, p Provider) (store.OAuthGrant, error) {
	var g store.OAuthGrant
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		g, err = tx.OAuth.Grant(ctx, p.Name)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return g, steward.Errorf(steward.CodeNotFound, "no %s account is connected: connect one in Settings → Mail and calendar", p.Label)
	}
	return g, err
}

// refresh takes the grant's lease and refreshes its tokens; ok is false when another process
// holds the lease (or its token is fresh again: the caller reads it anew).
func (s *Service) refresh(ctx context.Context, ownerID uuid.UUID, p Provider, email, stale string) (string, bool, error) {
	id := uuid.New()
	var g store.OAuthGrant
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		g, err = tx.OAuth.Lease(ctx, p.Name, id, LeaseTTL)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	release := func() {
		_ = s.Store.WithOwner(context.WithoutCancel(ctx), ownerID, func(tx *store.Tx) error { return tx.OAuth.Release(ctx, p.Name, id) })
	}
	// The holder before us may have refreshed just now: its token is the one to use.
	if access, err := s.Sealer.Open(g.AccessToken, ownerID[:]); err == nil && string(access) != stale && g.ExpiresAt.After(s.Now.Now().Add(RefreshMargin)) {
		release()
		return "", false, nil
	}
	rt, err := s.Sealer.Open(g.RefreshToken, ownerID[:])
	if err != nil {
		release()
		return "", false, invalid("the %s account's token cannot be opened (was STEWARD_SECRET_KEY changed?): reconnect %s in Settings → Mail and calendar", p.Label, p.Label)
	}
	cctx, cancel := context.WithTimeout(s.ctx(ctx), DefaultTimeout)
	defer cancel()
	t, err := p.Config(s.RedirectURL).TokenSource(cctx, &oauth2.Token{RefreshToken: string(rt), Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "unauthorized_client") {
			return "", false, s.markDisconnected(ctx, ownerID, p, email, re)
		}
		release()
		return "", false, steward.Errorf(steward.CodeUnavailable, "%s could not renew Steward's access just now (%s); try again in a minute", p.Label, clip(err.Error()))
	}
	access, refresh, err := s.seal(ownerID, t)
	if err != nil {
		release()
		return "", false, err
	}
	err = s.Store.WithOwner(context.WithoutCancel(ctx), ownerID, func(tx *store.Tx) error {
		return tx.OAuth.Refreshed(ctx, p.Name, id, access, refresh, s.expiry(t))
	})
	if err != nil {
		zerolog.Ctx(ctx).Error().Err(err).Str("provider", p.Name).Msg("oauth: a refreshed token could not be stored")
	}
	return t.AccessToken, true, nil
}

// markDisconnected records that the provider refused the grant and, the first time, leaves
// the owner a notification with the way back.
func (s *Service) markDisconnected(ctx context.Context, ownerID uuid.UUID, p Provider, email string, re *oauth2.RetrieveError) error {
	problem := clip(fmt.Sprintf("%s refused to renew access (%s)", p.Label, strings.TrimSpace(re.ErrorCode+" "+re.ErrorDescription)))
	first := false
	err := s.Store.WithOwner(context.WithoutCancel(ctx), ownerID, func(tx *store.Tx) error {
		var err error
		if first, err = tx.OAuth.Disconnect(ctx, p.Name, problem); err != nil || !first {
			return err
		}
		_, err = tx.Tasks.CreateNotification(ctx, "", p.Label+" disconnected",
			fmt.Sprintf("%s disconnected: Steward can no longer reach the mail and calendar of %s (%s). Reconnect it in Settings → Mail and calendar%s.",
				p.Label, email, problem, s.reconnectLink()))
		return err
	})
	if err != nil {
		return err
	}
	if first && s.Notified != nil {
		s.Notified(context.WithoutCancel(ctx), ownerID)
	}
	return disconnected(p, email)
}

// reconnectLink is the Settings page's address, when the deployment has one.
func (s *Service) reconnectLink() string {
	if base, ok := strings.CutSuffix(s.RedirectURL, CallbackPath); ok && base != "" {
		return ": " + base + "/settings/accounts"
	}
	return ""
}

// Disconnect revokes the owner's grant at the provider (when it has a revocation endpoint)
// and deletes it, with whatever inTx removes (the owner's accounts) in the same transaction.
// note says what the owner should know of the revocation ("" when it went through).
func (s *Service) Disconnect(ctx context.Context, ownerID uuid.UUID, provider string, inTx func(*store.Tx) error) (note string, err error) {
	p, err := s.Provider(provider)
	if err != nil {
		return "", err
	}
	g, err := s.grant(ctx, ownerID, p)
	if err != nil {
		return "", err
	}
	note = s.revoke(ctx, ownerID, p, g)
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if err := tx.OAuth.DeleteGrant(ctx, p.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if inTx != nil {
			return inTx(tx)
		}
		return nil
	})
	return note, err
}

// revoke asks the provider to revoke the refresh token (RFC 7009), which ends its access
// tokens too; it returns words for the owner when that could not be done.
func (s *Service) revoke(ctx context.Context, ownerID uuid.UUID, p Provider, g store.OAuthGrant) string {
	by := fmt.Sprintf("remove Steward's access in your %s account's security settings", p.Label)
	if p.RevokeURL == "" {
		return fmt.Sprintf("%s has no way for Steward to revoke its access: %s", p.Label, by)
	}
	rt, err := s.Sealer.Open(g.RefreshToken, ownerID[:])
	if err != nil {
		return "Steward could not open its token to revoke it: " + by
	}
	cctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	form := url.Values{"token": {string(rt)}, "token_type_hint": {"refresh_token"}}
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, p.RevokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "the revocation address is not a URL: " + by
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(p.ClientID), url.QueryEscape(p.ClientSecret))
	hc, _ := s.ctx(ctx).Value(oauth2.HTTPClient).(*http.Client)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Sprintf("%s could not be reached to revoke Steward's access: %s", p.Label, by)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// RFC 7009 §2.2: 200 also for a token already invalid.
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("%s answered HTTP %d to the revocation: %s", p.Label, resp.StatusCode, by)
	}
	return ""
}

// View is what the owner sees of a grant: never a token.
type View struct {
	Provider  string    `json:"provider"`
	Label     string    `json:"label"`
	Email     string    `json:"email"`
	Scopes    string    `json:"scopes"`
	Connected bool      `json:"connected"`
	Problem   string    `json:"problem,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Grants lists the owner's grants.
func (s *Service) Grants(ctx context.Context, ownerID uuid.UUID) ([]View, error) {
	if s == nil {
		return nil, nil
	}
	var rows []store.OAuthGrant
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rows, err = tx.OAuth.Grants(ctx)
		return err
	})
	out := make([]View, 0, len(rows))
	for _, g := range rows {
		label := g.Provider
		if p, ok := s.Providers[g.Provider]; ok {
			label = p.Label
		}
		out = append(out, View{Provider: g.Provider, Label: label, Email: g.Email, Scopes: g.Scopes,
			Connected: g.Status == "connected", Problem: g.Problem, CreatedAt: g.CreatedAt})
	}
	return out, err
}
