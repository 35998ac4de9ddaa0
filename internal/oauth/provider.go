package oauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// The providers' names (the oauth_grants.provider column's values).
const (
	Google    = "google"
	Microsoft = "microsoft"
	Generic   = "generic"
)

// SASL mechanisms a provider's mail servers take a token with.
const (
	XOAUTH2     = "xoauth2"
	OAUTHBEARER = "oauthbearer"
)

// Provider is an authorization server and the mail and calendar servers its tokens open.
type Provider struct {
	// Name is google, microsoft or generic; Label what the owner reads ("Google").
	Name, Label string
	// AuthURL, TokenURL and RevokeURL are the endpoints (RevokeURL "" : none, as Microsoft).
	AuthURL, TokenURL, RevokeURL string
	ClientID, ClientSecret       string
	// Scopes are requested; Uses say, one line each, what they let Steward do (shown before
	// the redirect). Required are the scopes a grant must carry, else it is refused.
	Scopes, Uses, Required []string
	// Issuer, when set, must be the id_token's iss.
	Issuer string
	// IMAPURL and SMTPURL are the mail servers (both empty: no mail); SASL the mechanism.
	IMAPURL, SMTPURL, SASL string
	// CalDAVURL is the calendar, {email} replaced by the account's address ("" : no calendar).
	CalDAVURL string
	// Params are extra authorization request parameters (Google's access_type=offline).
	Params map[string]string
}

// Presets are Google's and Microsoft's endpoints, scopes and servers; the operator adds the
// client id and secret (docs/MAIL.md "Google", "Microsoft").
func Presets() map[string]Provider {
	return map[string]Provider{
		Google: {Name: Google, Label: "Google",
			AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
			RevokeURL: "https://oauth2.googleapis.com/revoke", Issuer: "https://accounts.google.com",
			Scopes: []string{"openid", "email", "https://mail.google.com/", "https://www.googleapis.com/auth/calendar"},
			Uses: []string{"your address (openid, email): to know which account this is",
				"Gmail over IMAP and SMTP (https://mail.google.com/): to read, search, move, flag and — when you approve — send mail",
				"Google Calendar (https://www.googleapis.com/auth/calendar): to list events and — when you approve — create, change or delete them"},
			Required: []string{"https://mail.google.com/", "https://www.googleapis.com/auth/calendar"},
			IMAPURL:  "imaps://imap.gmail.com:993", SMTPURL: "smtps://smtp.gmail.com:465", SASL: XOAUTH2,
			CalDAVURL: "https://apidata.googleusercontent.com/caldav/v2/{email}/events/",
			Params:    map[string]string{"access_type": "offline", "prompt": "consent"}},
		Microsoft: {Name: Microsoft, Label: "Microsoft",
			AuthURL:  "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
			TokenURL: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
			Scopes: []string{"openid", "email", "offline_access", "https://outlook.office.com/IMAP.AccessAsUser.All",
				"https://outlook.office.com/SMTP.Send"},
			Uses: []string{"your address (openid, email): to know which account this is",
				"staying signed in (offline_access): to refresh access without asking you again",
				"Outlook mail over IMAP (IMAP.AccessAsUser.All): to read, search, move and flag mail",
				"sending over SMTP (SMTP.Send): to send mail, only when you approve"},
			Required: []string{"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"},
			IMAPURL:  "imaps://outlook.office365.com:993", SMTPURL: "smtp://smtp.office365.com:587", SASL: XOAUTH2},
	}
}

// Config builds x/oauth2's configuration of p for the redirect URL.
func (p Provider) Config(redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, RedirectURL: redirect, Scopes: p.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: p.AuthURL, TokenURL: p.TokenURL, AuthStyle: p.authStyle()}}
}

// authStyle is how the client authenticates at the token endpoint: in the form for Google and
// Microsoft, HTTP Basic (RFC 6749 §2.3.1's must) for the generic provider — never x/oauth2's
// auto-detection, which sends a failed code exchange a second time.
func (p Provider) authStyle() oauth2.AuthStyle {
	if p.Name == Generic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// Check says what is missing from a provider's configuration, in words.
func (p Provider) Check() error {
	var missing []string
	for _, f := range []struct{ name, v string }{{"CLIENT_ID", p.ClientID}, {"CLIENT_SECRET", p.ClientSecret},
		{"AUTH_URL", p.AuthURL}, {"TOKEN_URL", p.TokenURL}} {
		if f.v == "" {
			missing = append(missing, "STEWARD_OAUTH_"+strings.ToUpper(p.Name)+"_"+f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s sign-in needs %s", p.Label, strings.Join(missing, ", "))
	}
	if p.IMAPURL == "" && p.CalDAVURL == "" {
		return fmt.Errorf("%s sign-in opens neither mail nor a calendar: set STEWARD_OAUTH_%s_IMAP_URL and _SMTP_URL, or _CALDAV_URL", p.Label, strings.ToUpper(p.Name))
	}
	if p.SASL != XOAUTH2 && p.SASL != OAUTHBEARER {
		return fmt.Errorf("STEWARD_OAUTH_%s_SASL is %q: xoauth2 or oauthbearer", strings.ToUpper(p.Name), p.SASL)
	}
	return nil
}

// identity is what Steward reads of an id_token: whose it is and for whom it was made.
type identity struct {
	Email string
}

// idClaims are the id_token's claims Steward checks.
type idClaims struct {
	Iss               string          `json:"iss"`
	Aud               json.RawMessage `json:"aud"`
	Exp               int64           `json:"exp"`
	Email             string          `json:"email"`
	PreferredUsername string          `json:"preferred_username"`
}

// readIDToken checks an id_token received straight from the token endpoint over TLS (OpenID
// Connect Core §3.1.3.7: its signature may then go unchecked): made for this client, by the
// expected issuer, not expired, naming an address.
func (p Provider) readIDToken(raw string, now time.Time) (identity, error) {
	parts := strings.Split(raw, ".")
	if raw == "" || len(parts) != 3 {
		return identity{}, errors.New("its answer carried no id_token (the openid scope), so Steward cannot tell which account this is")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	var c idClaims
	if err == nil {
		err = json.Unmarshal(payload, &c)
	}
	if err != nil {
		return identity{}, errors.New("its id_token is not a JSON Web Token")
	}
	var auds []string
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		auds = []string{one}
	} else if json.Unmarshal(c.Aud, &auds) != nil {
		auds = nil
	}
	if !slices.Contains(auds, p.ClientID) {
		return identity{}, fmt.Errorf("its id_token was made for another application (audience %s), not this server's client", strings.Join(auds, ", "))
	}
	if p.Issuer != "" && c.Iss != p.Issuer {
		return identity{}, fmt.Errorf("its id_token was issued by %q, not %q", c.Iss, p.Issuer)
	}
	if c.Exp != 0 && time.Unix(c.Exp, 0).Before(now.Add(-5*time.Minute)) {
		return identity{}, errors.New("its id_token has expired")
	}
	email := c.Email
	if email == "" {
		email = c.PreferredUsername
	}
	if email == "" || len(email) > 320 || !strings.Contains(email, "@") || strings.ContainsAny(email, "\r\n\x00 ") {
		return identity{}, errors.New("its id_token names no mail address (the email scope)")
	}
	return identity{Email: email}, nil
}

// missingScopes are the required scopes a token response's scope does not carry (none when
// the response does not say: RFC 6749 §5.1 then means all were granted).
func (p Provider) missingScopes(granted string) []string {
	if strings.TrimSpace(granted) == "" {
		return nil
	}
	have := strings.Fields(granted)
	var out []string
	for _, s := range p.Required {
		if !slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	return out
}
