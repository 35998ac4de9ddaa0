package accounts_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/oauth/oauthtest"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// fakes are the tests' authorization servers; the shared SMTP sink takes any of their tokens.
var (
	fakes     sync.Map // *oauthtest.Fake → true
	sinkOnce  sync.Once
	fakeLabel = "Fake ID"
)

// oauthEnv is the app with the generic provider pointed at a fake authorization server, a
// Dovecot whose oauth2 passdb asks the fake's introspection endpoint, and a CalDAV proxy in
// front of Radicale that takes the fake's bearer tokens.
type oauthEnv struct {
	*apptest.Env
	owner  uuid.UUID
	key    string
	user   string
	email  string
	fake   *oauthtest.Fake
	imap   netip.AddrPort
	clock  *atomic.Int64 // seconds added to the system clock
	caldav string
}

func newOAuthEnv(t *testing.T, user string) *oauthEnv {
	t.Helper()
	email := user + "@example.test"
	fake := oauthtest.New(email)
	t.Cleanup(fake.Close)
	fakes.Store(fake, true)
	t.Cleanup(func() { fakes.Delete(fake) })
	sinkOnce.Do(func() {
		servers.Sink.SetBearer(func(tok string) (string, bool) {
			var who string
			var ok bool
			fakes.Range(func(k, _ any) bool { who, ok = k.(*oauthtest.Fake).Active(tok); return !ok })
			return who, ok
		})
	})
	imap, err := servers.StartOAuthIMAP(fake.URL + "/introspect")
	if err != nil {
		t.Fatal(err)
	}
	proxy := fake.CalDAVProxy(strings.TrimSuffix(servers.CalDAVURL(), "/"), func(e string) (string, string) {
		u, _, _ := strings.Cut(e, "@")
		return u, mailtest.Users[u]
	})
	t.Cleanup(proxy.Close)
	proxyAddr := strings.TrimPrefix(proxy.URL, "http://")
	clock := &atomic.Int64{}
	e := apptest.New(t, apptest.Options{Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load()) * time.Second) },
		Env: map[string]string{
			"STEWARD_EGRESS_ALLOW":                servers.AllowEnv() + "," + imap.String() + "," + proxyAddr,
			"STEWARD_OAUTH_GENERIC_CLIENT_ID":     fake.ClientID,
			"STEWARD_OAUTH_GENERIC_CLIENT_SECRET": fake.ClientSecret,
			"STEWARD_OAUTH_GENERIC_AUTH_URL":      fake.URL + "/authorize",
			"STEWARD_OAUTH_GENERIC_TOKEN_URL":     fake.URL + "/token",
			"STEWARD_OAUTH_GENERIC_REVOKE_URL":    fake.URL + "/revoke",
			"STEWARD_OAUTH_GENERIC_SCOPES":        "openid email offline_access mail calendar",
			"STEWARD_OAUTH_GENERIC_IMAP_URL":      "imap://" + imap.String(),
			"STEWARD_OAUTH_GENERIC_SMTP_URL":      servers.SMTPURL(),
			"STEWARD_OAUTH_GENERIC_CALDAV_URL":    proxy.URL + mailtest.CalendarPath(user),
			"STEWARD_OAUTH_GENERIC_NAME":          fakeLabel,
		}})
	o, key := e.DB.Owner(t, "owner-"+user)
	return &oauthEnv{Env: e, owner: o.ID, key: key, user: user, email: email, fake: fake, imap: imap, clock: clock, caldav: proxy.URL}
}

// browser is a signed-in web session: a cookie jar, redirects not followed, its CSRF token.
type browser struct {
	c    *http.Client
	base string
	csrf string
}

func (e *oauthEnv) signIn(t *testing.T) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, base: e.Server.URL}
	_, page := b.get(t, "/signin")
	tok := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if tok == nil {
		t.Fatalf("no sign-in form:\n%s", page)
	}
	if resp, body := b.post(t, "/signin", url.Values{"api_key": {e.key}, "csrf": {tok[1]}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", resp.StatusCode, body)
	}
	_, page = b.get(t, "/settings/accounts")
	m := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the settings page:\n%s", page)
	}
	b.csrf = m[1]
	return b
}

func (b *browser) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(t, req)
}

func (b *browser) post(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	if b.csrf != "" {
		form.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(t, req)
}

// page follows redirects within the app (a flash cookie included) and returns the page's text.
func (b *browser) page(t *testing.T, path string) string {
	t.Helper()
	for range 5 {
		resp, body := b.get(t, path)
		if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
			return body
		}
		path = resp.Header.Get("Location")
	}
	t.Fatalf("too many redirects from %s", path)
	return ""
}

// begin presses "Connect" and returns the provider's authorization URL it was sent to.
func (b *browser) begin(t *testing.T) string {
	t.Helper()
	resp, body := b.post(t, "/settings/accounts/oauth/generic/connect", url.Values{})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("connect: %d %s", resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}

// back follows the provider's redirect into the app as a browser does: the callback page (no
// session cookie would come with it) sends it on to the finish page, whose flash it returns.
func (b *browser) back(t *testing.T, callback string) string {
	t.Helper()
	u, err := url.Parse(callback)
	if err != nil || u.Path != oauth.CallbackPath {
		t.Fatalf("the provider sent the browser to %q, not %s", callback, oauth.CallbackPath)
	}
	resp, bounce := (&browser{c: http.DefaultClient, base: b.base}).get(t, oauth.CallbackPath+"?"+u.RawQuery)
	next := regexp.MustCompile(`http-equiv="refresh" content="0;url=([^"]+)"`).FindStringSubmatch(bounce)
	if resp.StatusCode != http.StatusOK || next == nil {
		t.Fatalf("callback: %d %s", resp.StatusCode, bounce)
	}
	return b.page(t, strings.ReplaceAll(next[1], "&amp;", "&"))
}

// connect runs the whole flow and checks the owner sees the provider connected.
func (e *oauthEnv) connect(t *testing.T, b *browser) {
	t.Helper()
	cb, err := e.fake.Consent(b.begin(t), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.back(t, cb); !strings.Contains(got, fakeLabel+" connected as "+e.email) {
		t.Fatalf("after the sign-in the page does not say %q:\n%s", fakeLabel+" connected", text(got))
	}
}

// text is a page without its tags, for failure messages and searches.
func text(page string) string {
	return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " ")), " ")
}

// seed stores a message in the oauth Dovecot's mailbox of email, logged in with OAUTHBEARER
// and a token the fake mints.
func (e *oauthEnv) seed(t *testing.T, subject string) {
	t.Helper()
	c, err := imapclient.DialInsecure(e.imap.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Authenticate(sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: e.email, Token: e.fake.Mint(e.email)})); err != nil {
		t.Fatalf("OAUTHBEARER to Dovecot: %v", err)
	}
	data := []byte(strings.ReplaceAll("From: Ada <ada@example.com>\nTo: "+e.email+"\nSubject: "+subject+"\nDate: Mon, 7 Dec 2026 09:00:00 +0000\n\nHello.\n", "\n", "\r\n"))
	cmd := c.Append("INBOX", int64(len(data)), nil)
	if _, err := cmd.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

func (e *oauthEnv) notifications(t *testing.T) []string {
	t.Helper()
	var out []string
	err := e.App.Store.WithOwner(context.Background(), e.owner, func(tx *store.Tx) error {
		ns, err := tx.Tasks.ListNotifications(context.Background(), 50)
		for _, n := range ns {
			out = append(out, n.Title+": "+n.Message)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOAuthConnectsMailAndCalendar: Settings lists what the provider is asked for before the
// redirect; the authorization request carries PKCE (S256) and a state; after the consent the
// owner's mail works over IMAP XOAUTH2 against Dovecot's oauth2 passdb (the seeded message
// found), a send goes out over SMTP XOAUTH2, and the calendar over CalDAV with the bearer
// token (an event created and listed) — no password stored anywhere.
func TestOAuthConnectsMailAndCalendar(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "ursula")
	b := e.signIn(t)
	settings := text(b.page(t, "/settings/accounts"))
	for _, want := range []string{"Steward asks " + fakeLabel + " for:", "the scopes openid email offline_access mail calendar", "Connect " + fakeLabel} {
		if !strings.Contains(settings, want) {
			t.Fatalf("Settings does not show %q before the redirect:\n%s", want, settings)
		}
	}
	auth := b.begin(t)
	q, _ := url.Parse(auth)
	if q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("code_challenge") == "" || len(q.Query().Get("state")) < 40 {
		t.Fatalf("the authorization request lacks PKCE or a state: %s", auth)
	}
	cb, err := e.fake.Consent(auth, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(b.back(t, cb)); !strings.Contains(got, fakeLabel+" connected as "+e.email) || !strings.Contains(got, "mail and calendar") {
		t.Fatalf("after the sign-in: %s", got)
	}
	if got := text(b.page(t, "/settings/accounts")); !strings.Contains(got, fakeLabel+" connected") || !strings.Contains(got, "signed in with generic") {
		t.Fatalf("Settings after connecting: %s", got)
	}

	ctx := context.Background()
	e.seed(t, "Lunch on Friday?")
	found, err := e.App.Accounts.SearchMail(ctx, e.owner, steward.MailQuery{})
	if err != nil || len(found) != 1 || found[0].Subject != "Lunch on Friday?" {
		t.Fatalf("search over XOAUTH2 = %+v, %v", found, err)
	}
	if _, err := e.App.Accounts.SendMail(ctx, e.owner, steward.OutgoingMail{To: []string{"ada@example.com"}, Subject: "Yes", Body: "Friday works."}, ""); err != nil {
		t.Fatalf("send over SMTP XOAUTH2: %v", err)
	}
	if got := servers.Sink.Messages(e.email); len(got) != 1 || !strings.Contains(string(got[0].Data), "Friday works.") {
		t.Fatalf("the sink received %d messages logged in as %s", len(got), e.email)
	}
	start := time.Now().Add(48 * time.Hour).Truncate(time.Hour)
	if _, err := e.App.Accounts.CreateEvent(ctx, e.owner, steward.EventDraft{Title: "Dentist", Start: start, End: start.Add(time.Hour)}); err != nil {
		t.Fatalf("create an event over CalDAV with a bearer token: %v", err)
	}
	events, err := e.App.Accounts.Events(ctx, e.owner, start.Add(-time.Hour), start.Add(2*time.Hour))
	if err != nil || len(events) != 1 || events[0].Title != "Dentist" {
		t.Fatalf("events = %+v, %v", events, err)
	}
	list, err := e.App.Accounts.List(ctx, e.owner)
	if err != nil || len(list) != 2 || list[0].OAuth != "generic" || list[1].OAuth != "generic" {
		t.Fatalf("accounts = %+v, %v", list, err)
	}
}

// TestOAuthCallbackRefusals: each callback Steward must not honour is refused in words and
// connects nothing — a state this session did not start, another session's, one replayed, one
// expired, a code used twice, the owner denying consent.
func TestOAuthCallbackRefusals(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "victor")
	b := e.signIn(t)
	other := e.signIn(t) // the same owner in another browser
	consent := func(auth string) string {
		cb, err := e.fake.Consent(auth, true)
		if err != nil {
			t.Fatal(err)
		}
		return cb
	}
	refused := func(name, page, want string) {
		t.Helper()
		got := text(page)
		if !strings.Contains(got, "Not connected") || !strings.Contains(got, want) {
			t.Errorf("%s: the page does not refuse with %q:\n%s", name, want, got)
		}
	}

	refused("unknown state", b.back(t, oauth.CallbackPath+"?state=made-up-state&code=x"), "is not one this session started")

	cb := consent(b.begin(t))
	refused("another session", other.back(t, cb), "was started in another session")

	denied, err := e.fake.Consent(b.begin(t), false)
	if err != nil {
		t.Fatal(err)
	}
	refused("consent denied", b.back(t, denied), "was cancelled")

	late := consent(b.begin(t))
	e.clock.Store(int64((oauth.StateTTL + time.Minute) / time.Second))
	refused("expired state", b.back(t, late), "has expired")
	e.clock.Store(0)

	if grants, _ := e.App.Accounts.Grants(context.Background(), e.owner); len(grants) != 0 {
		t.Fatalf("a refused callback stored a grant: %+v", grants)
	}

	// The first session's callback still works (another session's attempt did not use it up).
	if got := text(b.back(t, cb)); !strings.Contains(got, fakeLabel+" connected") {
		t.Fatalf("the session's own callback: %s", got)
	}
	refused("replayed state", b.back(t, cb), "was already used")

	// The same code with a fresh state: the provider refuses it.
	fresh, _ := url.Parse(consent(b.begin(t)))
	old, _ := url.Parse(cb)
	q := fresh.Query()
	q.Set("code", old.Query().Get("code"))
	refused("code used twice", b.back(t, oauth.CallbackPath+"?"+q.Encode()), "refused the sign-in code")
}

// TestOAuthRefusesBadAnswers: a token endpoint answering garbage, no refresh token, an
// id_token for another audience or none, or fewer scopes than asked — each refused in words,
// nothing stored.
func TestOAuthRefusesBadAnswers(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "walter")
	b := e.signIn(t)
	for _, tc := range []struct {
		name string
		cue  oauthtest.Cue
		want string
	}{
		{"garbage", oauthtest.Cue{Garbage: true}, "token endpoint"},
		{"no refresh token", oauthtest.Cue{NoRefreshToken: true}, "gave no refresh token"},
		{"another audience", oauthtest.Cue{Audience: "someone-elses-client"}, "made for another application"},
		{"no id_token", oauthtest.Cue{NoIDToken: true}, "no id_token"},
		{"a scope not granted", oauthtest.Cue{Scope: "openid email offline_access mail"}, "did not grant calendar"},
	} {
		e.fake.SetCue(tc.cue)
		cb, err := e.fake.Consent(b.begin(t), true)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(b.back(t, cb)); !strings.Contains(got, "Not connected") || !strings.Contains(got, tc.want) || !strings.Contains(got, "nothing was connected") {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
	e.fake.SetCue(oauthtest.Cue{})
	grants, _ := e.App.Accounts.Grants(context.Background(), e.owner)
	list, _ := e.App.Accounts.List(context.Background(), e.owner)
	if len(grants) != 0 || len(list) != 0 {
		t.Fatalf("a refused answer stored something: grants %+v, accounts %+v", grants, list)
	}
}

// TestOAuthRefreshes: a token about to expire is refreshed before use; a token the server
// refuses (401, IMAP NO) is refreshed once and the call succeeds; two callers needing a
// refresh at once spend the rotating refresh token once — the second waits for the first's.
func TestOAuthRefreshes(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "xena")
	b := e.signIn(t)
	ctx := context.Background()
	e.fake.SetCue(oauthtest.Cue{TTL: 90 * time.Second}) // inside oauth.RefreshMargin
	e.connect(t, b)
	e.fake.SetCue(oauthtest.Cue{})
	if _, err := e.App.Accounts.SearchMail(ctx, e.owner, steward.MailQuery{}); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.Refreshes(); n != 1 {
		t.Fatalf("a token expiring within the margin: %d refreshes before use, want 1", n)
	}

	e.fake.ExpireAccess() // the server now refuses the stored token
	e.seed(t, "After the refresh")
	if found, err := e.App.Accounts.SearchMail(ctx, e.owner, steward.MailQuery{}); err != nil || len(found) != 1 {
		t.Fatalf("search after the token was refused = %+v, %v", found, err)
	}
	e.fake.ExpireAccess()
	if events, err := e.App.Accounts.Events(ctx, e.owner, time.Now(), time.Now().Add(time.Hour)); err != nil || events == nil && err != nil {
		t.Fatalf("calendar after the token was refused: %v", err)
	}
	if n := e.fake.Refreshes(); n != 3 {
		t.Fatalf("%d refreshes, want 3 (one more after each 401)", n)
	}

	// Two at once: the first holds the lease while the provider answers; the second waits.
	stale, err := e.App.Accounts.OAuth.Token(ctx, e.owner, "generic", "")
	if err != nil {
		t.Fatal(err)
	}
	release := e.fake.Hold()
	defer release()
	waiting := make(chan struct{}, 1)
	e.App.Accounts.OAuth.Wait = func(ctx context.Context) error {
		select {
		case waiting <- struct{}{}:
		default:
		}
		time.Sleep(20 * time.Millisecond)
		return ctx.Err()
	}
	var wg sync.WaitGroup
	toks := make([]string, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks[i], errs[i] = e.App.Accounts.OAuth.Token(ctx, e.owner, "generic", stale)
		}()
	}
	// Released once one of them found the lease held — or, were there no lease, once both
	// reached the provider with the same refresh token.
	for len(waiting) == 0 && e.fake.Held() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	release()
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || toks[0] == "" || toks[0] != toks[1] || toks[0] == stale {
		t.Fatalf("concurrent refreshes: tokens %q, errors %v", toks, errs)
	}
	if n := e.fake.Refreshes(); n != 4 {
		t.Fatalf("%d refreshes after two concurrent callers, want 4 (one more)", n)
	}
	if grants, _ := e.App.Accounts.Grants(ctx, e.owner); len(grants) != 1 || !grants[0].Connected {
		t.Fatalf("after the concurrent refresh: %+v", grants)
	}
}

// TestOAuthRevokedAndDisconnect: a grant the provider withdrew turns every use into "needs to
// be reconnected", the owner is notified once and Settings shows "disconnected: reconnect";
// reconnecting works; Disconnect revokes the refresh token at the provider and deletes the
// grant and its accounts.
func TestOAuthRevokedAndDisconnect(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, "yara")
	b := e.signIn(t)
	ctx := context.Background()
	e.connect(t, b)
	e.fake.RevokeAll()
	for range 2 {
		_, err := e.App.Accounts.SearchMail(ctx, e.owner, steward.MailQuery{})
		if !oauth.IsDisconnected(err) || !strings.Contains(err.Error(), "your "+fakeLabel+" account "+e.email+" needs to be reconnected") {
			t.Fatalf("search with a revoked grant: %v", err)
		}
	}
	if _, err := e.App.Accounts.Events(ctx, e.owner, time.Now(), time.Now().Add(time.Hour)); !oauth.IsDisconnected(err) {
		t.Fatalf("calendar with a revoked grant: %v", err)
	}
	if res, err := e.App.Accounts.Test(ctx, e.owner, accounts.Mail); err != nil || res.OK || !strings.Contains(res.Error, "needs to be reconnected") {
		t.Fatalf("test with a revoked grant = %+v, %v", res, err)
	}
	if ns := e.notifications(t); len(ns) != 1 || !strings.Contains(ns[0], fakeLabel+" disconnected") || !strings.Contains(ns[0], "Reconnect it in Settings") {
		t.Fatalf("notifications = %q, want one saying %s disconnected", ns, fakeLabel)
	}
	if got := text(b.page(t, "/settings/accounts")); !strings.Contains(got, fakeLabel+" disconnected: reconnect") || !strings.Contains(got, "Reconnect "+fakeLabel) {
		t.Fatalf("Settings with a revoked grant: %s", got)
	}
	var listed struct {
		SignIns []oauth.View `json:"sign_ins"`
	}
	if status := (env{Env: e.Env, key: e.key}).api(t, "GET", "/v1/accounts", "", &listed); status != http.StatusOK || len(listed.SignIns) != 1 ||
		listed.SignIns[0].Connected || !strings.Contains(listed.SignIns[0].Problem, "refused to renew access (invalid_grant") {
		t.Fatalf("GET /v1/accounts with a revoked grant = %d %+v", status, listed)
	}

	e.connect(t, b)
	if _, err := e.App.Accounts.SearchMail(ctx, e.owner, steward.MailQuery{}); err != nil {
		t.Fatalf("search after reconnecting: %v", err)
	}

	resp, body := b.post(t, "/settings/accounts/oauth/generic/disconnect", url.Values{})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("disconnect: %d %s", resp.StatusCode, body)
	}
	if got := text(b.page(t, resp.Header.Get("Location"))); !strings.Contains(got, "access was revoked") {
		t.Fatalf("after disconnecting: %s", got)
	}
	if revoked := e.fake.Revoked(); len(revoked) != 1 || !strings.HasPrefix(revoked[0], "rt-") {
		t.Fatalf("revoked at the provider: %q, want the refresh token", revoked)
	}
	grants, _ := e.App.Accounts.Grants(ctx, e.owner)
	list, _ := e.App.Accounts.List(ctx, e.owner)
	if len(grants) != 0 || len(list) != 0 {
		t.Fatalf("after disconnecting: grants %+v, accounts %+v", grants, list)
	}
}
