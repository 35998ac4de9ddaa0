package oauth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// idToken makes an unsigned id_token with claims (readIDToken reads one straight from the
// token endpoint over TLS, whose signature may go unchecked).
func idToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return "e30." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

// TestPresetsAskForTheLeastAndSayWhy: each preset requests only what mail and calendar need,
// says in a line why for each scope it requests, requires what a grant must carry, and is
// complete once the operator sets the client's id and secret — and says in words which
// variable is missing before.
func TestPresetsAskForTheLeastAndSayWhy(t *testing.T) {
	for name, p := range Presets() {
		if len(p.Uses) == 0 || len(p.Required) == 0 {
			t.Errorf("%s: Uses %v, Required %v; want both (shown before the redirect, checked after)", name, p.Uses, p.Required)
		}
		for _, s := range p.Scopes {
			if strings.Contains(s, "readonly") || strings.Contains(s, "Directory") || strings.Contains(s, "drive") || strings.Contains(s, "contacts") {
				t.Errorf("%s requests %s, which mail and calendar do not need", name, s)
			}
		}
		for _, r := range p.Required {
			if !strings.Contains(strings.Join(p.Scopes, " "), r) {
				t.Errorf("%s requires %s without requesting it", name, r)
			}
		}
		err := p.Check()
		if err == nil || !strings.Contains(err.Error(), "STEWARD_OAUTH_"+strings.ToUpper(name)+"_CLIENT_ID") {
			t.Errorf("%s without a client: Check() = %v; want the missing variable named", name, err)
		}
		p.ClientID, p.ClientSecret = "id", "secret"
		if err := p.Check(); err != nil {
			t.Errorf("%s with a client: Check() = %v", name, err)
		}
	}
	if p := Presets()[Microsoft]; p.RevokeURL != "" || p.CalDAVURL != "" {
		t.Errorf("Microsoft: revoke %q, calendar %q; it has neither (mail only)", p.RevokeURL, p.CalDAVURL)
	}
	g := Presets()[Google]
	if g.Params["access_type"] != "offline" {
		t.Errorf("Google's access_type = %q; without offline no refresh token comes", g.Params["access_type"])
	}
}

// TestGenericProviderNeedsServersAndASASL: a generic provider that opens nothing, or names a
// mechanism Steward does not speak, is refused in words; it authenticates at the token
// endpoint with HTTP Basic, the presets in the form (never x/oauth2's auto-detection, which
// spends a refused code a second time).
func TestGenericProviderNeedsServersAndASASL(t *testing.T) {
	p := Provider{Name: Generic, Label: "Fake ID", ClientID: "id", ClientSecret: "s", AuthURL: "https://id.test/a", TokenURL: "https://id.test/t"}
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "neither mail nor a calendar") {
		t.Errorf("no servers: %v", err)
	}
	p.IMAPURL, p.SASL = "imaps://mail.test:993", "plain"
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "STEWARD_OAUTH_GENERIC_SASL") {
		t.Errorf("SASL plain: %v", err)
	}
	p.SASL = OAUTHBEARER
	if err := p.Check(); err != nil {
		t.Errorf("complete: %v", err)
	}
	if got := p.Config("https://steward.test/oauth/callback").Endpoint.AuthStyle; got != oauth2.AuthStyleInHeader {
		t.Errorf("generic AuthStyle = %v, want in header", got)
	}
	if got := Presets()[Google].Config("x").Endpoint.AuthStyle; got != oauth2.AuthStyleInParams {
		t.Errorf("Google AuthStyle = %v, want in params", got)
	}
}

// TestIDTokenIsForThisClientAndNamesAnAddress: an id_token made for another client, by
// another issuer, long expired, naming no address, or not a token at all is refused in words.
func TestIDTokenIsForThisClientAndNamesAnAddress(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	p := Presets()[Google]
	p.ClientID = "steward-client"
	ok := map[string]any{"iss": p.Issuer, "aud": "steward-client", "exp": now.Add(time.Hour).Unix(), "email": "ada@example.com"}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range ok {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	if id, err := p.readIDToken(idToken(t, ok), now); err != nil || id.Email != "ada@example.com" {
		t.Fatalf("a good id_token: %+v, %v", id, err)
	}
	if id, err := p.readIDToken(idToken(t, with("aud", []string{"other", "steward-client"})), now); err != nil || id.Email != "ada@example.com" {
		t.Errorf("an audience list holding this client: %+v, %v", id, err)
	}
	for name, tc := range map[string]struct {
		raw  string
		want string
	}{
		"none":            {"", "no id_token"},
		"not a JWT":       {"a.!!!.c", "not a JSON Web Token"},
		"another client":  {idToken(t, with("aud", "someone-else")), "another application"},
		"another issuer":  {idToken(t, with("iss", "https://evil.test")), "issued by"},
		"expired":         {idToken(t, with("exp", now.Add(-time.Hour).Unix())), "expired"},
		"no address":      {idToken(t, with("email", nil)), "names no mail address"},
		"header injected": {idToken(t, with("email", "ada@example.com\r\nBcc: x@y")), "names no mail address"},
	} {
		if _, err := p.readIDToken(tc.raw, now); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", name, err, tc.want)
		}
	}
}

// TestMissingScopes: a grant short of a required scope is named; an answer that does not say
// means all were granted (RFC 6749 §5.1).
func TestMissingScopes(t *testing.T) {
	p := Presets()[Google]
	if got := p.missingScopes("openid email https://mail.google.com/"); len(got) != 1 || got[0] != "https://www.googleapis.com/auth/calendar" {
		t.Errorf("missing = %v; want the calendar scope", got)
	}
	if got := p.missingScopes(""); got != nil {
		t.Errorf("unsaid = %v; want none", got)
	}
}

// FuzzReadIDToken: an id_token comes from outside; whatever it holds, reading it ends in an
// identity or an error, never a panic.
func FuzzReadIDToken(f *testing.F) {
	f.Add("e30.eyJhdWQiOiJpZCIsImVtYWlsIjoiYUBiIn0.x")
	f.Add("a.b.c")
	p := Provider{Name: Generic, ClientID: "id"}
	f.Fuzz(func(t *testing.T, raw string) {
		if id, err := p.readIDToken(raw, time.Unix(0, 0)); err == nil && !strings.Contains(id.Email, "@") {
			t.Errorf("accepted %q without an address", raw)
		}
	})
}
