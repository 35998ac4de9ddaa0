// Package oauthtest is the tests' own OAuth 2.0 authorization server on loopback
// (docs/MAIL.md, "Tested against real servers"): it speaks the real protocol — an
// authorization endpoint with a consent page that redirects back with a code, a token
// endpoint that checks the client, the redirect URI and the PKCE verifier (S256), takes each
// code once and rotates refresh tokens (a spent one is refused), RFC 7009 revocation and RFC
// 7662 introspection (which Dovecot's oauth2 passdb asks) — and can expire, revoke or
// misbehave on cue. A CalDAV proxy in front of Radicale takes its bearer tokens.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Fake is the authorization server.
type Fake struct {
	*httptest.Server
	ClientID, ClientSecret string

	mu sync.Mutex
	// Email is whose consent the page gives (the user signed in at the provider).
	email    string
	codes    map[string]*code
	access   map[string]*grant // access token → its grant
	refresh  map[string]*grant // live refresh token → its grant
	spent    map[string]bool   // refresh tokens rotated away
	cue      Cue
	refreshN int
	revoked  []string
	// hold, when set, is waited on by a refresh before it answers (to race two); held counts
	// the refreshes waiting on it.
	hold chan struct{}
	held int
}

// Cue is misbehaviour the next token responses show.
type Cue struct {
	// TTL is the access tokens' life (default an hour).
	TTL time.Duration
	// NoRefreshToken leaves the refresh token out of a code's answer.
	NoRefreshToken bool
	// Audience is the id_token's aud instead of the client id.
	Audience string
	// Scope is what the answer says was granted instead of what was asked.
	Scope string
	// Garbage answers the token endpoint with an HTML page.
	Garbage bool
	// NoIDToken leaves the id_token out.
	NoIDToken bool
}

type code struct {
	challenge, redirect, scope, email string
	used                              bool
	grant                             *grant
}

type grant struct {
	email, scope string
	expires      time.Time
	dead         bool
	tokens       []string
}

// New starts a fake provider whose consent signs email in.
func New(email string) *Fake {
	f := &Fake{ClientID: "steward-test-client", ClientSecret: "steward-test-secret", email: email,
		codes: map[string]*code{}, access: map[string]*grant{}, refresh: map[string]*grant{}, spent: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", f.authorize)
	mux.HandleFunc("POST /consent", f.consent)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("POST /revoke", f.revoke)
	mux.HandleFunc("POST /introspect", f.introspect)
	f.Server = httptest.NewServer(mux)
	return f
}

// SetCue sets the misbehaviour of the next answers (the zero Cue: none).
func (f *Fake) SetCue(c Cue) { f.mu.Lock(); f.cue = c; f.mu.Unlock() }

// SetEmail changes whose consent the page gives.
func (f *Fake) SetEmail(e string) { f.mu.Lock(); f.email = e; f.mu.Unlock() }

// Hold makes refreshes wait until the returned function is called.
func (f *Fake) Hold() (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.hold = ch
	f.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { f.mu.Lock(); f.hold = nil; f.mu.Unlock(); close(ch) }) }
}

// Held counts the refreshes that waited on Hold.
func (f *Fake) Held() int { f.mu.Lock(); defer f.mu.Unlock(); return f.held }

// Refreshes counts the refresh grants the token endpoint answered with tokens.
func (f *Fake) Refreshes() int { f.mu.Lock(); defer f.mu.Unlock(); return f.refreshN }

// Revoked lists the tokens revoked through the revocation endpoint.
func (f *Fake) Revoked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.revoked...)
}

// ExpireAccess makes every access token issued so far expired (its refresh token still works).
func (f *Fake) ExpireAccess() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.access {
		g.expires = time.Now().Add(-time.Minute)
	}
}

// RevokeAll withdraws every grant, as an owner removing the app at the provider does.
func (f *Fake) RevokeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.refresh {
		g.dead = true
	}
	for _, g := range f.access {
		g.dead = true
	}
}

// Mint issues an access token for email directly (a test seeding a mailbox), for an hour.
func (f *Fake) Mint(email string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := "at-" + random()
	f.access[at] = &grant{email: email, expires: time.Now().Add(time.Hour)}
	return at
}

// Active reports whether an access token would be accepted now, and whose it is.
func (f *Fake) Active(token string) (email string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.access[token]
	if !ok || g.dead || time.Now().After(g.expires) {
		return "", false
	}
	return g.email, true
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// authorize is the consent page: what the client asks, and Allow or Deny.
func (f *Fake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != f.ClientID || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		http.Error(w, "unknown client or not a code request", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "PKCE (S256) is required", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	email := f.email
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var hidden strings.Builder
	for _, k := range []string{"redirect_uri", "state", "code_challenge", "scope"} {
		fmt.Fprintf(&hidden, `<input type="hidden" name="%s" value="%s">`, k, html.EscapeString(q.Get(k)))
	}
	fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>Fake provider</title>
<h1>Allow Steward?</h1><p>Signed in as %s. Steward asks for: %s</p>
<form method="post" action="/consent">%s<button name="answer" value="allow">Allow</button> <button name="answer" value="deny">Deny</button></form>`,
		html.EscapeString(email), html.EscapeString(q.Get("scope")), hidden.String())
}

// consent answers the page: back to the redirect URI with a code, or with access_denied.
func (f *Fake) consent(w http.ResponseWriter, r *http.Request) {
	back, err := url.Parse(r.PostFormValue("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := url.Values{"state": {r.PostFormValue("state")}}
	if r.PostFormValue("answer") != "allow" {
		v.Set("error", "access_denied")
	} else {
		c := random()
		f.mu.Lock()
		f.codes[c] = &code{challenge: r.PostFormValue("code_challenge"), redirect: back.String(), scope: r.PostFormValue("scope"), email: f.email}
		f.mu.Unlock()
		v.Set("code", c)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// Consent is what a browser does at the consent page, as plain HTTP: it opens authURL and
// allows, and returns the URL the provider sends the browser back to.
func (f *Fake) Consent(authURL string, allow bool) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", err
	}
	resp, err := http.Get(authURL)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("authorize: %d %s", resp.StatusCode, body)
	}
	q := u.Query()
	form := url.Values{"redirect_uri": {q.Get("redirect_uri")}, "state": {q.Get("state")}, "code_challenge": {q.Get("code_challenge")},
		"scope": {q.Get("scope")}, "answer": {map[bool]string{true: "allow", false: "deny"}[allow]}}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = cl.PostForm(f.URL+"/consent", form)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Header.Get("Location"), nil
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// clientOK checks the client's credentials, in the Authorization header or the form.
func (f *Fake) clientOK(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	return id == f.ClientID && secret == f.ClientSecret
}

func (f *Fake) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !f.clientOK(r) {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		f.exchange(w, r)
	case "refresh_token":
		f.refreshGrant(w, r)
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "")
	}
}

func (f *Fake) exchange(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.codes[r.PostForm.Get("code")]
	switch {
	case !ok:
		tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown code")
		return
	case c.used:
		// RFC 6749 §4.1.2: a code used twice is refused, and what it gave revoked.
		if c.grant != nil {
			c.grant.dead = true
		}
		tokenError(w, http.StatusBadRequest, "invalid_grant", "code already used")
		return
	case r.PostForm.Get("redirect_uri") != c.redirect:
		tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match")
		return
	}
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "PKCE verification failed")
		return
	}
	c.used = true
	c.grant = &grant{email: c.email, scope: c.scope}
	f.issue(w, c.grant, true)
}

func (f *Fake) refreshGrant(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		f.mu.Lock()
		f.held++
		f.mu.Unlock()
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rt := r.PostForm.Get("refresh_token")
	g, ok := f.refresh[rt]
	if !ok || g.dead {
		desc := "unknown refresh token"
		if f.spent[rt] {
			desc = "refresh token already used (rotated)"
		}
		tokenError(w, http.StatusBadRequest, "invalid_grant", desc)
		return
	}
	delete(f.refresh, rt)
	f.spent[rt] = true
	f.refreshN++
	f.issue(w, g, false)
}

// issue answers with a new access token and a new refresh token of g (under f.mu).
func (f *Fake) issue(w http.ResponseWriter, g *grant, withID bool) {
	cue := f.cue
	if cue.Garbage {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>Service Unavailable</html>")
		return
	}
	ttl := cue.TTL
	if ttl == 0 {
		ttl = time.Hour
	}
	at, rt := "at-"+random(), "rt-"+random()
	g.expires = time.Now().Add(ttl)
	f.access[at] = g
	g.tokens = append(g.tokens, at)
	body := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(ttl.Seconds())}
	if !(withID && cue.NoRefreshToken) {
		f.refresh[rt] = g
		body["refresh_token"] = rt
	}
	body["scope"] = g.scope
	if cue.Scope != "" {
		body["scope"] = cue.Scope
	}
	if withID && !cue.NoIDToken {
		aud := f.ClientID
		if cue.Audience != "" {
			aud = cue.Audience
		}
		body["id_token"] = idToken(map[string]any{"iss": f.URL, "aud": aud, "email": g.email, "sub": g.email,
			"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(body)
}

// idToken is an unsigned JWT (Steward reads it straight from the token endpoint).
func idToken(claims map[string]any) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	p, _ := json.Marshal(claims)
	return h + "." + base64.RawURLEncoding.EncodeToString(p) + ".c2lnbmF0dXJl"
}

func (f *Fake) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !f.clientOK(r) {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	t := r.PostForm.Get("token")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, t)
	if g, ok := f.refresh[t]; ok {
		g.dead = true
	}
	if g, ok := f.access[t]; ok {
		g.dead = true
	}
	w.WriteHeader(http.StatusOK)
}

// introspect is RFC 7662 (Dovecot's oauth2 passdb, introspection_mode = post).
func (f *Fake) introspect(w http.ResponseWriter, r *http.Request) {
	email, ok := f.Active(r.PostFormValue("token"))
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		_, _ = io.WriteString(w, `{"active":false}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "username": email, "email": email})
}

// CalDAVProxy is a CalDAV server that takes the fake's bearer tokens: it checks each
// request's token and forwards it to target (Radicale) logged in as login(email) says.
func (f *Fake) CalDAVProxy(target string, login func(email string) (user, password string)) *httptest.Server {
	t, _ := url.Parse(target)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		email, live := f.Active(tok)
		if !ok || !live {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		u, p := login(email)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host, out.Host = t.Scheme, t.Host, t.Host
		out.SetBasicAuth(u, p)
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
}
