package app

import (
	"context"
	"net/netip"
	"strings"

	"github.com/google/uuid"
	"github.com/stewardhq/steward/internal/delivery"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/calendar"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// newAccounts builds the owner's mail and calendar accounts: every connection through a
// guard of STEWARD_EGRESS_ALLOW's exemptions (the mail ports for IMAP and SMTP; https, and
// http only to an exempt address, for CalDAV: docs/MAIL.md).
func newAccounts(cfg config.Config, st *store.Store, sealer *secret.Sealer, lookup func(context.Context, string) ([]netip.Addr, error), now steward.Clock) *accounts.Service {
	mailGuard := egress.NewGuard(egress.Options{Allow: cfg.EgressAllow, Lookup: lookup, Ports: mail.Ports})
	calGuard := egress.NewGuard(egress.Options{Allow: cfg.EgressAllow, Lookup: lookup, AllowHTTP: true, Timeout: calendar.DefaultTimeout})
	return &accounts.Service{Store: st, Sealer: sealer, Now: now, OAuth: newOAuth(cfg, st, sealer, now),
		Mail: &mail.Client{Guard: mailGuard}, Calendar: &calendar.Client{Guard: calGuard}}
}

// newOAuth builds the sign-ins with providers (docs/MAIL.md): Google's and Microsoft's
// presets with the operator's clients, and the generic provider as configured; a provider
// without a client id is off. The redirect URI is STEWARD_PUBLIC_URL's (else the web app's
// origin) /oauth/callback.
func newOAuth(cfg config.Config, st *store.Store, sealer *secret.Sealer, now steward.Clock) *oauth.Service {
	presets := oauth.Presets()
	providers := map[string]oauth.Provider{}
	for name, c := range map[string]config.OAuthProvider{oauth.Google: cfg.OAuth.Google, oauth.Microsoft: cfg.OAuth.Microsoft, oauth.Generic: cfg.OAuth.Generic} {
		if c.ClientID == "" {
			continue
		}
		p, ok := presets[name]
		if !ok {
			p = oauth.Provider{Name: oauth.Generic, Label: c.Label, AuthURL: c.AuthURL, TokenURL: c.TokenURL, RevokeURL: c.RevokeURL,
				Issuer: c.Issuer, Scopes: strings.Fields(c.Scopes), IMAPURL: c.IMAPURL, SMTPURL: c.SMTPURL, SASL: c.SASL, CalDAVURL: c.CalDAVURL}
			p.Uses = []string{"the scopes " + c.Scopes + ": your address, and your mail and calendar on the servers this deployment names"}
			for _, sc := range p.Scopes { // what is asked beyond the sign-in itself must be granted
				if sc != "openid" && sc != "email" && sc != "profile" && sc != "offline_access" {
					p.Required = append(p.Required, sc)
				}
			}
		}
		p.ClientID, p.ClientSecret = c.ClientID, c.ClientSecret
		providers[name] = p
	}
	base := cfg.PublicURL
	if base == "" {
		base = cfg.PasskeyOrigin
	}
	return &oauth.Service{Store: st, Sealer: sealer, Providers: providers, Now: now,
		RedirectURL: strings.TrimRight(base, "/") + oauth.CallbackPath}
}

// noticeDisconnects delivers at once the notification of a grant its provider refused
// (delivery.FlushKind on the work spine; the tick's drain retries a failure).
func (a *App) noticeDisconnects() {
	if a.Accounts == nil || a.Accounts.OAuth == nil || a.Deliverer == nil {
		return
	}
	a.Accounts.OAuth.Notified = func(ctx context.Context, ownerID uuid.UUID) {
		a.Work.Hand(ctx, delivery.FlushKind, ownerID, "oauth")
	}
}
