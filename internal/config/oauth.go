package config

import (
	"strings"
)

// OAuthProvider is one sign-in provider's settings, STEWARD_OAUTH_<NAME>_* (docs/MAIL.md,
// docs/CONFIGURATION.md): the client the operator registered, and for the generic provider
// also its endpoints, scopes and the mail and calendar servers its tokens open. A provider
// without a client id is off.
type OAuthProvider struct {
	ClientID, ClientSecret string
	// ClientSecretParam is an SSM parameter holding the client secret
	// (STEWARD_OAUTH_<NAME>_CLIENT_SECRET_SSM), read at cold start.
	ClientSecretParam string
	// The generic provider's: endpoints, the id_token's issuer, the scopes (space-separated),
	// the servers, the SASL mechanism (xoauth2 or oauthbearer) and the name shown.
	AuthURL, TokenURL, RevokeURL, Issuer, Scopes string
	IMAPURL, SMTPURL, CalDAVURL, SASL, Label     string
}

// OAuth is the sign-in providers: Google's and Microsoft's client (their endpoints and
// servers are presets), and a generic provider for tests and self-hosted identity providers.
type OAuth struct {
	Google, Microsoft, Generic OAuthProvider
}

// oauth reads STEWARD_OAUTH_*.
func (r *reader) oauth() OAuth {
	client := func(name string) OAuthProvider {
		p := "STEWARD_OAUTH_" + name + "_"
		return OAuthProvider{ClientID: r.str(p+"CLIENT_ID", ""), ClientSecret: r.str(p+"CLIENT_SECRET", ""),
			ClientSecretParam: r.str(p+"CLIENT_SECRET_SSM", "")}
	}
	o := OAuth{Google: client("GOOGLE"), Microsoft: client("MICROSOFT"), Generic: client("GENERIC")}
	g := &o.Generic
	p := "STEWARD_OAUTH_GENERIC_"
	g.AuthURL, g.TokenURL, g.RevokeURL = r.str(p+"AUTH_URL", ""), r.str(p+"TOKEN_URL", ""), r.str(p+"REVOKE_URL", "")
	g.Issuer, g.Scopes = r.str(p+"ISSUER", ""), r.str(p+"SCOPES", "openid email offline_access")
	g.IMAPURL, g.SMTPURL, g.CalDAVURL = r.str(p+"IMAP_URL", ""), r.str(p+"SMTP_URL", ""), r.str(p+"CALDAV_URL", "")
	g.SASL = r.oneOf(p+"SASL", "xoauth2", "xoauth2", "oauthbearer")
	g.Label = r.str(p+"NAME", "your identity provider")
	for _, u := range []string{"AUTH_URL", "TOKEN_URL", "REVOKE_URL", "CALDAV_URL"} {
		r.httpURL(p+u, r.str(p+u, ""))
	}
	for _, c := range []struct {
		name string
		p    OAuthProvider
	}{{"GOOGLE", o.Google}, {"MICROSOFT", o.Microsoft}, {"GENERIC", o.Generic}} {
		if c.p.ClientID != "" && c.p.ClientSecret == "" && c.p.ClientSecretParam == "" {
			r.fail("STEWARD_OAUTH_"+c.name+"_CLIENT_ID", c.p.ClientID, "needs STEWARD_OAUTH_"+c.name+"_CLIENT_SECRET (or its _SSM parameter)")
		}
	}
	if o.Generic.ClientID != "" && (g.AuthURL == "" || g.TokenURL == "") {
		r.fail(p+"CLIENT_ID", g.ClientID, "needs STEWARD_OAUTH_GENERIC_AUTH_URL and STEWARD_OAUTH_GENERIC_TOKEN_URL")
	}
	g.Scopes = strings.Join(strings.Fields(g.Scopes), " ")
	return o
}
