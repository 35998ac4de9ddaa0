package webapp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/auth"
	"github.com/stewardhq/steward/internal/passkeys"
)

// newClient is a browser-like client: a cookie jar, redirects not followed.
func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signInAs signs c in with key the way a browser does: it opens the sign-in page (which sets
// the pre-session cookie) and posts its form, token included, from the same origin. It
// returns the answer to the POST.
func signInAs(t *testing.T, c *http.Client, base, key string, header ...string) *answer {
	t.Helper()
	form := url.Values{"api_key": {key}, "csrf": {signinToken(t, c, base, header...)}}
	return postSignin(t, c, base, form, append([]string{"Origin", base, "Sec-Fetch-Site", "same-origin"}, header...)...)
}

// signinToken opens the sign-in page and returns its form's CSRF token.
func signinToken(t *testing.T, c *http.Client, base string, header ...string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/signin", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	a := roundTrip(t, c, req)
	if a.status != http.StatusOK {
		t.Fatalf("GET /signin = %d %s", a.status, a.body)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(a.body)
	if m == nil {
		t.Fatalf("the sign-in form has no CSRF field:\n%s", a.body)
	}
	return m[1]
}

// answer is what a client saw.
type answer struct {
	status int
	header http.Header
	body   string
	resp   *http.Response
}

// session reports whether the answer signed the client in.
func (a *answer) session() bool {
	for _, c := range a.resp.Cookies() {
		if c.Name == "steward_session" && c.Value != "" {
			return true
		}
	}
	return false
}

func postSignin(t *testing.T, c *http.Client, base string, form url.Values, header ...string) *answer {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return roundTrip(t, c, req)
}

func roundTrip(t *testing.T, c *http.Client, req *http.Request) *answer {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &answer{status: resp.StatusCode, header: resp.Header, body: string(b), resp: resp}
}

// signinServer is production's graph (internal/apptest) behind a proxy that puts the
// client's address in X-Forwarded-For, and an owner alice with her key.
func signinServer(t *testing.T) (base, key string) {
	t.Helper()
	e := apptest.New(t, apptest.Options{MaxConns: 4, Env: map[string]string{
		"STEWARD_TRUSTED_PROXY_HEADER": "X-Forwarded-For", "STEWARD_PASSKEY_ORIGIN": "http://localhost"}})
	_, key = e.DB.Owner(t, "alice")
	srv := e.Server
	return srv.URL, key
}

// TestCrossSiteSignInIsRefused (issue 27 §5, login CSRF): a sign-in form posted from another
// site — or without the token of the sign-in page this browser opened — signs nobody in: 403
// and a page that says what to do. The browser's own sign-in still works.
func TestCrossSiteSignInIsRefused(t *testing.T) {
	t.Parallel()
	base, key := signinServer(t)
	attacker := newClient()
	attackerToken := signinToken(t, attacker, base) // the attacker opens the page themselves

	for _, tc := range []struct {
		name   string
		token  string // "own" is the victim's page's token
		header []string
	}{
		{"a form on another site (the browser says cross-site)", "", []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}},
		{"a form on another site carrying the attacker's own token", attackerToken, []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}},
		{"the attacker's own token, no browser headers", attackerToken, nil},
		{"no token at all", "", nil},
		{"the page's token, but an Origin of another site", "own", []string{"Origin", "https://attacker.example"}},
		{"the page's token, but from a sibling site", "own", []string{"Origin", "https://evil." + strings.TrimPrefix(base, "http://"), "Sec-Fetch-Site", "same-site"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			victim := newClient()
			own := signinToken(t, victim, base) // the victim has opened Steward's page before
			form := url.Values{"api_key": {key}}
			switch tc.token {
			case "own":
				form.Set("csrf", own)
			case "":
			default:
				form.Set("csrf", tc.token)
			}
			a := postSignin(t, victim, base, form, tc.header...)
			if a.status != http.StatusForbidden || a.session() {
				t.Fatalf("POST /signin = %d (session cookie: %v); want 403 and no session", a.status, a.session())
			}
			if !strings.Contains(a.body, "open the sign-in page and try again") {
				t.Fatalf("the refusal does not say what to do:\n%s", a.body)
			}
			// The victim is not signed in: the app still sends them to the sign-in page.
			if a := roundTrip(t, victim, mustRequest("GET", base+"/")); a.status != http.StatusSeeOther || a.header.Get("Location") != "/signin" {
				t.Fatalf("GET / after a refused sign-in = %d to %q; want 303 to /signin", a.status, a.header.Get("Location"))
			}
		})
	}

	t.Run("the sign-in page's own form", func(t *testing.T) {
		c := newClient()
		a := signInAs(t, c, base, key)
		if a.status != http.StatusSeeOther || !a.session() {
			t.Fatalf("sign in from the page = %d (session cookie: %v) %s; want 303 with a session", a.status, a.session(), a.body)
		}
		u, _ := url.Parse(base + "/signin")
		var pre *http.Cookie
		for _, ck := range c.Jar.Cookies(u) {
			if ck.Name == "steward_signin" {
				pre = ck
			}
		}
		if pre == nil {
			t.Fatal("the sign-in page set no pre-session cookie steward_signin")
		}
	})
}

// TestSignInFailuresAreSlowedDown (issue 27 §5): after 10 failed sign-ins in a minute from
// one client, that client is told in words to wait (429, Retry-After) — even with the right
// key — while another client still signs in; 10 unknown keys sharing a key's prefix slow
// further unknown keys with that prefix down, never the real key.
func TestSignInFailuresAreSlowedDown(t *testing.T) {
	t.Parallel()
	base, key := signinServer(t)
	from := func(ip string) []string { return []string{"X-Forwarded-For", ip} }

	c := newClient()
	for i := range 10 {
		a := signInAs(t, c, base, "stw_wrong"+strconv.Itoa(i), from("203.0.113.9")...)
		if a.status != http.StatusUnauthorized || !strings.Contains(a.body, "That API key is unknown or revoked.") {
			t.Fatalf("wrong key %d = %d; want 401 saying the key is unknown:\n%s", i+1, a.status, a.body)
		}
	}
	a := signInAs(t, c, base, key, from("203.0.113.9")...)
	if a.status != http.StatusTooManyRequests || a.session() {
		t.Fatalf("11th attempt from the same client = %d (session cookie: %v); want 429 and no session", a.status, a.session())
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After = %q; want 1 to 60 seconds", a.header.Get("Retry-After"))
	}
	if !strings.Contains(a.body, "Too many failed sign-ins from your address") || !strings.Contains(a.body, "try again in") {
		t.Errorf("the 429 page does not say why and how long to wait:\n%s", a.body)
	}
	if a := signInAs(t, newClient(), base, key, from("198.51.100.4")...); a.status != http.StatusSeeOther || !a.session() {
		t.Fatalf("another client's sign-in = %d; want 303 with a session (one client's failures slow only it)", a.status)
	}

	// Unknown keys that share alice's key's prefix, from ten clients: the next one is slowed
	// down, alice's own key is not.
	prefix := auth.Display(key)
	for i := range 10 {
		a := signInAs(t, newClient(), base, prefix+"guess"+strconv.Itoa(i), from("192.0.2."+strconv.Itoa(10+i))...)
		if a.status != http.StatusUnauthorized {
			t.Fatalf("guess %d from its own client = %d; want 401", i+1, a.status)
		}
	}
	a = signInAs(t, newClient(), base, prefix+"guess-eleven", from("192.0.2.99")...)
	if a.status != http.StatusTooManyRequests || !strings.Contains(a.body, "Too many failed sign-ins with keys starting "+prefix) {
		t.Fatalf("11th unknown key with the prefix = %d; want 429 naming the prefix:\n%s", a.status, a.body)
	}
	if a := signInAs(t, newClient(), base, key, from("192.0.2.100")...); a.status != http.StatusSeeOther || !a.session() {
		t.Fatalf("alice's own key after guesses at its prefix = %d; want 303 with a session", a.status)
	}
}

// postJSON posts body to path as the sign-in page's script does: its CSRF token in
// X-CSRF-Token, plus header.
func postJSON(t *testing.T, c *http.Client, base, path, token, body string, header ...string) *answer {
	t.Helper()
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-CSRF-Token", token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return roundTrip(t, c, req)
}

// TestPasskeySignInGuards: the passkey sign-in routes and a device link's POST keep the key
// sign-in's protections — a cross-site request, or one without the token of this browser's
// page, is refused 403 in words before anything is looked up — and failed passkey sign-ins
// count as failed sign-ins: past 10 a minute the client is told to wait (429, Retry-After).
func TestPasskeySignInGuards(t *testing.T) {
	t.Parallel()
	base, _ := signinServer(t)
	same := []string{"Origin", base, "Sec-Fetch-Site", "same-origin"}
	cross := []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}
	for _, path := range []string{"/signin/passkey/begin", "/signin/passkey/finish"} {
		victim := newClient()
		own := signinToken(t, victim, base)
		for name, tc := range map[string]struct {
			token  string
			header []string
		}{
			"cross-site with the page's token": {own, cross},
			"no token":                         {"", same},
			"another browser's token":          {signinToken(t, newClient(), base), same},
		} {
			a := postJSON(t, victim, base, path, tc.token, `{}`, tc.header...)
			if a.status != http.StatusForbidden || a.session() || !strings.Contains(a.body, "did not come from Steward's own sign-in page") {
				t.Fatalf("%s, %s = %d %s; want 403 in words, no session", path, name, a.status, a.body)
			}
		}
	}
	c := newClient()
	token := signinToken(t, c, base)
	a := postJSON(t, c, base, "/signin/passkey/begin", token, `{}`, same...)
	if a.status != http.StatusOK || !strings.Contains(a.body, `"challenge"`) {
		t.Fatalf("begin from the sign-in page = %d %s; want the options", a.status, a.body)
	}

	from := []string{"X-Forwarded-For", "203.0.113.7"}
	for i := range 10 {
		a := postJSON(t, c, base, "/signin/passkey/finish", token, `{"id":"x"}`, append(same, from...)...)
		if a.status == http.StatusOK || a.status == http.StatusTooManyRequests || a.session() || !strings.Contains(a.body, `"error"`) {
			t.Fatalf("bad passkey answer %d = %d %s; want a refusal in words", i+1, a.status, a.body)
		}
	}
	a = postJSON(t, c, base, "/signin/passkey/finish", token, `{"id":"x"}`, append(same, from...)...)
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || !strings.Contains(a.body, "Too many failed sign-ins from your address") {
		t.Fatalf("11th failed passkey sign-in = %d %s; want 429 with Retry-After, in words", a.status, a.body)
	}
	// The key sign-in from that client waits too: one limiter.
	if a := signInAs(t, c, base, "stw_whatever", from...); a.status != http.StatusTooManyRequests {
		t.Fatalf("a key sign-in after 10 failed passkeys = %d; want 429", a.status)
	}

	// A device link's POST without its page's token, or cross-site, signs nobody in.
	d := newClient()
	req, _ := http.NewRequest("POST", base+"/d/"+strings.Repeat("A", 43), strings.NewReader("csrf=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(cross); i += 2 {
		req.Header.Set(cross[i], cross[i+1])
	}
	if a := roundTrip(t, d, req); a.status != http.StatusForbidden || a.session() || !strings.Contains(a.body, "nobody was signed in") {
		t.Fatalf("a cross-site device link POST = %d %s; want 403 in words", a.status, a.body)
	}
}

func mustRequest(method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// TestSigninSaysHowToGetAKey: someone at the sign-in page without a key reads how one is
// made, on a server and on AWS (docs/DEPLOY.md), next to the form.
func TestSigninSaysHowToGetAKey(t *testing.T) {
	t.Parallel()
	base, _ := signinServer(t)
	a := roundTrip(t, newClient(), mustRequest("GET", base+"/signin"))
	if a.status != http.StatusOK {
		t.Fatalf("GET /signin = %d", a.status)
	}
	for _, want := range []string{"No key yet?", "<code>steward owners add NAME</code>", "<code>steward remote owners add NAME</code>"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the sign-in page does not say %q:\n%s", want, a.body)
		}
	}
}

// TestPasskeySignInBeginsAreBounded: every POST /signin/passkey/begin stores a ceremony, so
// a client holding the sign-in page's token could fill the table (3,000 rows in 42 s on
// main). Past 10 begins a minute a client is told to wait (429, Retry-After, in words), and
// however many clients begin, at most passkeys.MaxOpenCeremonies sign-ins are kept.
func TestPasskeySignInBeginsAreBounded(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, apptest.Options{MaxConns: 4, Env: map[string]string{
		"STEWARD_TRUSTED_PROXY_HEADER": "X-Forwarded-For", "STEWARD_PASSKEY_ORIGIN": "http://localhost"}})
	base := e.Server.URL
	c := newClient()
	token := signinToken(t, c, base)
	same := []string{"Origin", base, "Sec-Fetch-Site", "same-origin"}
	begin := func(client string) *answer {
		return postJSON(t, c, base, "/signin/passkey/begin", token, `{}`, append(same, "X-Forwarded-For", client)...)
	}
	for i := range 10 {
		if a := begin("203.0.113.7"); a.status != http.StatusOK {
			t.Fatalf("begin %d from one client = %d %s; want the options", i+1, a.status, a.body)
		}
	}
	a := begin("203.0.113.7")
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || !strings.Contains(a.body, "Too many passkey sign-ins begun from your address") {
		t.Fatalf("11th begin from one client = %d %s; want 429 with Retry-After, in words", a.status, a.body)
	}
	if a := begin("203.0.113.8"); a.status != http.StatusOK {
		t.Fatalf("another client's begin = %d %s; want the options", a.status, a.body)
	}
	for i := range passkeys.MaxOpenCeremonies + 30 {
		if a := begin(fmt.Sprintf("10.%d.%d.1", i/10/250, i/10%250)); a.status != http.StatusOK {
			t.Fatalf("begin %d from many clients = %d %s", i+1, a.status, a.body)
		}
	}
	var n int
	if err := pgxScalar(t, e.DB.SuperURL, `SELECT count(*) FROM passkey_challenges WHERE purpose = $1`, "signin", &n); err != nil {
		t.Fatal(err)
	}
	if n > passkeys.MaxOpenCeremonies {
		t.Fatalf("%d sign-in ceremonies stored; want at most %d", n, passkeys.MaxOpenCeremonies)
	}
}
