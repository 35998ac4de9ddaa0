package oauth_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/oauth/oauthtest"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

const redirect = "https://steward.example/oauth/callback"

// env is the oauth Service on a real database, with the generic provider pointed at the fake
// authorization server, Google's and Microsoft's presets, and a clock the test moves.
type env struct {
	svc   *oauth.Service
	db    testdb.Opened
	fake  *oauthtest.Fake
	owner uuid.UUID
	skew  *atomic.Int64 // nanoseconds added to the system clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	fake := oauthtest.New("ada@example.test")
	t.Cleanup(fake.Close)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, err := secret.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db := testdb.Open(t, 4)
	o, _ := db.Owner(t, "ada")
	skew := &atomic.Int64{}
	providers := oauth.Presets()
	for _, n := range []string{oauth.Google, oauth.Microsoft} {
		p := providers[n]
		p.ClientID, p.ClientSecret = n+"-client", n+"-secret"
		providers[n] = p
	}
	providers[oauth.Generic] = generic(fake)
	svc := &oauth.Service{Store: db.Store, Sealer: sealer, Providers: providers, RedirectURL: redirect,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }}
	return &env{svc: svc, db: db, fake: fake, owner: o.ID, skew: skew}
}

// generic is the generic provider as internal/app builds it from STEWARD_OAUTH_GENERIC_*.
func generic(f *oauthtest.Fake) oauth.Provider {
	return oauth.Provider{Name: oauth.Generic, Label: "Fake ID", AuthURL: f.URL + "/authorize", TokenURL: f.URL + "/token",
		RevokeURL: f.URL + "/revoke", ClientID: f.ClientID, ClientSecret: f.ClientSecret,
		Scopes: []string{"openid", "email", "offline_access", "mail"}, Required: []string{"mail"},
		IMAPURL: "imap://127.0.0.1:1", SASL: oauth.XOAUTH2}
}

// callback consents at the fake and returns what it sends the browser back with.
func (e *env) callback(t *testing.T, authURL string) oauth.Callback {
	t.Helper()
	loc, err := e.fake.Consent(authURL, true)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	return oauth.Callback{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error")}
}

func (e *env) begin(t *testing.T, session uuid.UUID, provider string) string {
	t.Helper()
	u, err := e.svc.Begin(context.Background(), e.owner, session, provider)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *env) grants(t *testing.T) []oauth.View {
	t.Helper()
	g, err := e.svc.Grants(context.Background(), e.owner)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The authorization URL goes to the provider's endpoint with PKCE (S256), an unguessable
// state, and exactly the provider's scopes — no more.
func TestAuthorizationURLCarriesPKCEStateAndLeastScopes(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		provider, endpoint string
		scopes             []string
		extra              map[string]string
	}{
		{oauth.Google, "https://accounts.google.com/o/oauth2/v2/auth",
			[]string{"openid", "email", "https://mail.google.com/", "https://www.googleapis.com/auth/calendar"},
			map[string]string{"access_type": "offline", "prompt": "consent"}},
		{oauth.Microsoft, "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
			[]string{"openid", "email", "offline_access", "https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send"}, nil},
		{oauth.Generic, e.fake.URL + "/authorize", []string{"openid", "email", "offline_access", "mail"}, nil},
	}
	states := map[string]bool{}
	for _, c := range cases {
		t.Run(c.provider, func(t *testing.T) {
			raw := e.begin(t, uuid.New(), c.provider)
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if got := u.Scheme + "://" + u.Host + u.Path; got != c.endpoint {
				t.Errorf("endpoint %s, want %s", got, c.endpoint)
			}
			if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 {
				t.Errorf("no PKCE S256 challenge: %s", raw)
			}
			if q.Get("code_verifier") != "" {
				t.Errorf("the PKCE verifier left in the URL: %s", raw)
			}
			st := q.Get("state")
			if len(st) < 40 || states[st] {
				t.Errorf("state %q is short or repeated", st)
			}
			states[st] = true
			if q.Get("response_type") != "code" || q.Get("redirect_uri") != redirect || q.Get("client_id") == "" {
				t.Errorf("not a code request for this client and redirect: %s", raw)
			}
			if got := strings.Fields(q.Get("scope")); !slices.Equal(got, c.scopes) {
				t.Errorf("scopes %q, want exactly %q", got, c.scopes)
			}
			for k, v := range c.extra {
				if q.Get(k) != v {
					t.Errorf("%s=%q, want %q", k, q.Get(k), v)
				}
			}
		})
	}
}

// The presets name the providers' real endpoints and servers, and require what Steward uses.
func TestPresetsEndpoints(t *testing.T) {
	p := oauth.Presets()
	g, m := p[oauth.Google], p[oauth.Microsoft]
	for _, c := range []struct{ name, got, want string }{
		{"Google token", g.TokenURL, "https://oauth2.googleapis.com/token"},
		{"Google revoke", g.RevokeURL, "https://oauth2.googleapis.com/revoke"},
		{"Google issuer", g.Issuer, "https://accounts.google.com"},
		{"Google IMAP", g.IMAPURL, "imaps://imap.gmail.com:993"},
		{"Google SMTP", g.SMTPURL, "smtps://smtp.gmail.com:465"},
		{"Microsoft token", m.TokenURL, "https://login.microsoftonline.com/common/oauth2/v2.0/token"},
		{"Microsoft revoke", m.RevokeURL, ""},
		{"Microsoft IMAP", m.IMAPURL, "imaps://outlook.office365.com:993"},
		{"Microsoft SMTP", m.SMTPURL, "smtp://smtp.office365.com:587"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if _, ok := p[oauth.Generic]; ok {
		t.Error("a generic preset: the generic provider is the operator's configuration")
	}
	for _, pr := range []oauth.Provider{g, m} {
		for _, r := range pr.Required {
			if !slices.Contains(pr.Scopes, r) {
				t.Errorf("%s requires %s, which it does not ask", pr.Label, r)
			}
		}
		if err := pr.Check(); err == nil || !strings.Contains(err.Error(), "CLIENT_ID") {
			t.Errorf("%s preset without a client: %v, want the missing CLIENT_ID named", pr.Label, err)
		}
	}
}

// A callback whose state is unknown, another session's, used already or too old is refused
// in words, and connects nothing.
func TestBadStatesAreRefusedInWords(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	session := uuid.New()
	refused := func(t *testing.T, cb oauth.Callback, sess uuid.UUID, want string) {
		t.Helper()
		_, err := e.svc.Finish(ctx, e.owner, sess, cb, nil)
		var se *steward.Error
		if !errors.As(err, &se) || se.Code != steward.CodeInvalid || !strings.Contains(err.Error(), want) {
			t.Fatalf("Finish: %v, want an invalid-request refusal saying %q", err, want)
		}
	}

	t.Run("unknown", func(t *testing.T) {
		cb := e.callback(t, e.begin(t, session, oauth.Generic))
		cb.State = "not-a-state-this-server-made"
		refused(t, cb, session, "not one this session started")
		refused(t, oauth.Callback{Code: cb.Code}, session, "came back without its state")
	})
	t.Run("another session's", func(t *testing.T) {
		cb := e.callback(t, e.begin(t, session, oauth.Generic))
		refused(t, cb, uuid.New(), "started in another session")
	})
	t.Run("expired", func(t *testing.T) {
		cb := e.callback(t, e.begin(t, session, oauth.Generic))
		e.skew.Store(int64(oauth.StateTTL + time.Second))
		defer e.skew.Store(0)
		refused(t, cb, session, "has expired")
	})
	if g := e.grants(t); len(g) != 0 {
		t.Fatalf("refused sign-ins connected %+v", g)
	}
	t.Run("used twice", func(t *testing.T) {
		cb := e.callback(t, e.begin(t, session, oauth.Generic))
		g, err := e.svc.Finish(ctx, e.owner, session, cb, nil)
		if err != nil || g.Email != "ada@example.test" {
			t.Fatalf("first callback: %+v, %v", g, err)
		}
		refused(t, cb, session, "already used")
	})
	if g := e.grants(t); len(g) != 1 || !g[0].Connected {
		t.Fatalf("grants %+v, want the one connected", g)
	}
}

// An access token is used as stored while it has more than RefreshMargin to live, and
// refreshed once it has RefreshMargin or less.
func TestTokenRefreshesBeforeExpiry(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	session := uuid.New()
	cb := e.callback(t, e.begin(t, session, oauth.Generic))
	if _, err := e.svc.Finish(ctx, e.owner, session, cb, nil); err != nil {
		t.Fatal(err)
	}
	var expires time.Time
	err := e.db.Store.WithOwner(ctx, e.owner, func(tx *store.Tx) error {
		g, err := tx.OAuth.Grant(ctx, oauth.Generic)
		expires = g.ExpiresAt
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) { e.skew.Store(int64(time.Until(expires.Add(-d)))) }

	at(oauth.RefreshMargin + time.Second)
	first, err := e.svc.Token(ctx, e.owner, oauth.Generic, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := e.fake.Refreshes(); n != 0 {
		t.Fatalf("%d refreshes with more than %s to live, want 0", n, oauth.RefreshMargin)
	}
	if _, ok := e.fake.Active(first); !ok {
		t.Fatalf("the stored token %q is not one the provider accepts", first)
	}

	at(oauth.RefreshMargin - time.Second)
	second, err := e.svc.Token(ctx, e.owner, oauth.Generic, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := e.fake.Refreshes(); n != 1 || second == first {
		t.Fatalf("%d refreshes and the token changed %v with less than %s to live, want 1 and a new token", n, second != first, oauth.RefreshMargin)
	}
	if _, ok := e.fake.Active(second); !ok {
		t.Fatalf("the refreshed token %q is not one the provider accepts", second)
	}
	// The refreshed token, now stored with its own hour, is used as is.
	e.skew.Store(0)
	again, err := e.svc.Token(ctx, e.owner, oauth.Generic, "")
	if err != nil || again != second || e.fake.Refreshes() != 1 {
		t.Fatalf("after the refresh: %q, %v, %d refreshes; want the refreshed token without another", again, err, e.fake.Refreshes())
	}
}
