package accounts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm"
	smail "github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/mailtest"
)

// servers are the package's Dovecot, Radicale and SMTP sink (started once: TestMain).
var servers *mailtest.Servers

func TestMain(m *testing.M) { mailtest.Main(m, &servers) }

// env is one test's app, its owner and the mail user whose accounts the owner connected.
type env struct {
	*apptest.Env
	owner uuid.UUID
	key   string
	user  string
}

// newEnv builds the app with the servers' addresses exempt and an owner; with user set it
// connects that user's mail and calendar (Europe/Berlin).
func newEnv(t *testing.T, user string, model llm.Model, extra map[string]string) env {
	t.Helper()
	vars := map[string]string{"STEWARD_EGRESS_ALLOW": servers.AllowEnv()}
	for k, v := range extra {
		vars[k] = v
	}
	e := apptest.New(t, apptest.Options{Model: model, Env: vars})
	o, key := e.DB.Owner(t, "owner-"+user)
	out := env{Env: e, owner: o.ID, key: key, user: user}
	if user != "" {
		out.connect(t)
	}
	return out
}

func (e env) connect(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.App.Accounts.AddMail(ctx, e.owner, accounts.MailInput{IMAPURL: servers.IMAPURL(), SMTPURL: servers.SMTPURL(),
		Username: e.user, Password: mailtest.Users[e.user], From: e.user + "@example.com"}); err != nil {
		t.Fatalf("add mail: %v", err)
	}
	if _, err := e.App.Accounts.AddCalendar(ctx, e.owner, accounts.CalendarInput{CalDAVURL: servers.CalDAVURL(), Username: e.user,
		Password: mailtest.Users[e.user], TimeZone: "Europe/Berlin"}); err != nil {
		t.Fatalf("add calendar: %v", err)
	}
}

// api calls the API as the owner and decodes the answer into out (when not nil).
func (e env) api(t *testing.T, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode
}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestAccountsThroughTheAPI: a mail and a calendar account added, listed without their
// passwords, tested and removed; a second one is a conflict; a wrong password, an
// unreachable host, a private address, a documentation address and plain http to a calendar not exempt are each refused in
// words, and nothing is stored.
func TestAccountsThroughTheAPI(t *testing.T) {
	t.Parallel()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := closed.Addr().String()
	closed.Close()
	e := newEnv(t, "", nil, map[string]string{"STEWARD_EGRESS_ALLOW": servers.AllowEnv() + "," + deadAddr})
	mailBody := func(imapURL, password string) string {
		b, _ := json.Marshal(map[string]string{"imap_url": imapURL, "smtp_url": servers.SMTPURL(), "username": "carol",
			"password": password, "from": "Carol <carol@example.com>"})
		return string(b)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"wrong password", mailBody(servers.IMAPURL(), "not-her-password"), "refused the login of \"carol\""},
		{"unreachable host", mailBody("imap://"+deadAddr, "carol-secret"), "cannot connect"},
		{"private address", mailBody("imaps://10.1.2.3", "carol-secret"), "is refused"},
		{"a documentation address", mailBody("imap://192.0.2.10:143", "carol-secret"), "is refused"},
		{"not a URL", mailBody("mail.example.com", "carol-secret"), "is not a URL such as imaps://"},
		{"no password", mailBody(servers.IMAPURL(), ""), "password is required"},
	} {
		var ae apiError
		if code := e.api(t, "POST", "/v1/accounts/mail", tc.body, &ae); code != http.StatusUnprocessableEntity && code != http.StatusBadRequest {
			t.Errorf("%s: %d %+v, want a refusal", tc.name, code, ae)
		}
		if !strings.Contains(ae.Error.Message, tc.want) {
			t.Errorf("%s: %q, want it to say %q", tc.name, ae.Error.Message, tc.want)
		}
	}
	var list struct {
		Accounts []accounts.View `json:"accounts"`
	}
	if e.api(t, "GET", "/v1/accounts", "", &list); len(list.Accounts) != 0 {
		t.Fatalf("refused accounts were stored: %+v", list.Accounts)
	}

	if code := e.api(t, "POST", "/v1/accounts/mail", mailBody(servers.IMAPURL(), "carol-secret"), nil); code != http.StatusCreated {
		t.Fatalf("add mail: %d", code)
	}
	var ae apiError
	if code := e.api(t, "POST", "/v1/accounts/mail", mailBody(servers.IMAPURL(), "carol-secret"), &ae); code != http.StatusConflict || !strings.Contains(ae.Error.Message, "remove it first") {
		t.Errorf("second mail account: %d %+v, want a conflict in words", code, ae)
	}
	cal, _ := json.Marshal(map[string]string{"caldav_url": servers.CalDAVURL(), "username": "carol", "password": "carol-secret", "timezone": "Europe/Berlin"})
	if code := e.api(t, "POST", "/v1/accounts/calendar", string(cal), nil); code != http.StatusCreated {
		t.Fatalf("add calendar: %d", code)
	}
	plain := strings.Replace(string(cal), servers.CalDAVURL(), "http://calendar.example.com/", 1)
	if code := e.api(t, "POST", "/v1/accounts/calendar", plain, &ae); code != http.StatusUnprocessableEntity || !strings.Contains(ae.Error.Message, "must use https") {
		t.Errorf("plain http to a host not exempt: %d %+v, want https required", code, ae)
	}
	badZone := strings.Replace(string(cal), "Europe/Berlin", "Mars/Olympus", 1)
	if code := e.api(t, "POST", "/v1/accounts/calendar", badZone, &ae); code != http.StatusUnprocessableEntity || !strings.Contains(ae.Error.Message, "IANA") {
		t.Errorf("bad zone: %d %+v", code, ae)
	}
	raw := bytes.Buffer{}
	req, _ := http.NewRequest("GET", e.Server.URL+"/v1/accounts", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(&raw, resp.Body)
	resp.Body.Close()
	if strings.Contains(raw.String(), "carol-secret") || !strings.Contains(raw.String(), `"calendar":"/carol/calendar/"`) ||
		!strings.Contains(raw.String(), `"imap_url":"`+servers.IMAPURL()) {
		t.Errorf("GET /v1/accounts = %s: want both accounts, the calendar found, no password", raw.String())
	}
	for _, kind := range []string{"mail", "calendar"} {
		var res accounts.TestResult
		if e.api(t, "POST", "/v1/accounts/"+kind+"/test", "", &res); !res.OK {
			t.Errorf("test %s: %+v", kind, res)
		}
	}
	if code := e.api(t, "DELETE", "/v1/accounts/mail", "", nil); code != http.StatusNoContent {
		t.Errorf("remove: %d", code)
	}
	if code := e.api(t, "DELETE", "/v1/accounts/mail", "", &ae); code != http.StatusNotFound {
		t.Errorf("remove again: %d", code)
	}
	if code := e.api(t, "POST", "/v1/accounts/phone/test", "", &ae); code != http.StatusNotFound || !strings.Contains(ae.Error.Message, "mail or calendar") {
		t.Errorf("unknown kind: %d %+v", code, ae)
	}
}

// TestTimeoutAndNoTLS: a server that accepts and never speaks is given up on at the
// client's timeout, in words; STARTTLS is required from an address that is not exempt.
func TestTimeoutAndNoTLS(t *testing.T) {
	t.Parallel()
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	e := newEnv(t, "", nil, map[string]string{"STEWARD_EGRESS_ALLOW": servers.AllowEnv() + "," + mute.Addr().String()})
	c := *e.App.Accounts.Mail
	c.Timeout = 700 * time.Millisecond
	start := time.Now()
	err = c.CheckLogin(context.Background(), smail.Account{IMAPURL: "imap://" + mute.Addr().String(), Username: "x", Password: "y"})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 700ms") || time.Since(start) > 5*time.Second {
		t.Errorf("mute server: %v after %s, want a timeout in words", err, time.Since(start))
	}
}
