package mailtools_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/accounts"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/steward"
)

// servers are the package's Dovecot, Radicale and SMTP sink (started once: TestMain).
var servers *mailtest.Servers

func TestMain(m *testing.M) { mailtest.Main(m, &servers) }

// env is one test's app and its owner, whose mail account is the mail user's.
type env struct {
	*apptest.Env
	owner uuid.UUID
	key   string
	user  string
}

// newEnv builds the app with the servers' addresses exempt and an owner who connected
// user's mail account.
func newEnv(t *testing.T, user string, model llm.Model) env {
	t.Helper()
	e := apptest.New(t, apptest.Options{Model: model, Env: map[string]string{"STEWARD_EGRESS_ALLOW": servers.AllowEnv()}})
	o, key := e.DB.Owner(t, "owner-"+user)
	if _, err := e.App.Accounts.AddMail(context.Background(), o.ID, accounts.MailInput{IMAPURL: servers.IMAPURL(), SMTPURL: servers.SMTPURL(),
		Username: user, Password: mailtest.Users[user], From: user + "@example.com"}); err != nil {
		t.Fatalf("add mail: %v", err)
	}
	return env{Env: e, owner: o.ID, key: key, user: user}
}

func (e env) append(t *testing.T, folder, raw string) {
	t.Helper()
	if _, err := servers.Append(e.user, folder, raw); err != nil {
		t.Fatalf("append: %v", err)
	}
}

func (e env) start(t *testing.T, message string) steward.View {
	t.Helper()
	v, err := e.App.Runner.Start(context.Background(), agent.Input{OwnerID: e.owner, Message: message}, nil)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return v
}

// resultsOf is the tool results of the last message of a request, by tool name.
func resultsOf(req llm.Request) map[string]steward.ToolResult {
	out := map[string]steward.ToolResult{}
	for _, p := range req.Messages[len(req.Messages)-1].Parts {
		if p.ToolResult != nil {
			out[p.ToolResult.Name] = *p.ToolResult
		}
	}
	return out
}

// TestNULInAMail: a mail whose subject and text carry a NUL byte (an encoded word's =00, a
// quoted-printable =00) and bytes that are not UTF-8 is read by search_mail over the whole
// inbox and by read_mail: both succeed with the NUL shown as U+FFFD, the other mail is listed
// too, the turn completes and its audit rows are written.
func TestNULInAMail(t *testing.T) {
	t.Parallel()
	var told map[string]steward.ToolResult
	model := scripted.New(
		scripted.Reply(scripted.Calls(scripted.Call("s1", "search_mail", `{}`), scripted.Call("r1", "read_mail", `{"id":"INBOX:2"}`))),
		func(req llm.Request) (llm.Response, error) {
			told = resultsOf(req)
			return scripted.Text("Two mails."), nil
		})
	e := newEnv(t, "alice", model)
	e.append(t, "INBOX", "From: Ada <ada@example.com>\nTo: alice@example.com\nSubject: Lunch\n\nShall we?\n")
	e.append(t, "INBOX", "From: Mallory <m@evil.example>\nTo: alice@example.com\nSubject: =?UTF-8?Q?Invoice=00now?=\n"+
		"MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n"+
		"Pay=00 today =FF=FE please.\n")
	v := e.start(t, "what is in my inbox?")
	if v.Status != steward.StatusCompleted || v.Answer != "Two mails." {
		t.Fatalf("turn: %s %q, want completed", v.Status, v.Error)
	}
	search, read := told["search_mail"], told["read_mail"]
	if search.IsError || !strings.Contains(string(search.Output), "Invoice\uFFFDnow") || !strings.Contains(string(search.Output), "Lunch") {
		t.Errorf("search_mail told the model %s, want both mails, the NUL as U+FFFD", search.Output)
	}
	if read.IsError || !strings.Contains(string(read.Output), "Pay\uFFFD today") {
		t.Errorf("read_mail told the model %s, want the text with the NUL as U+FFFD", read.Output)
	}
	if kinds := e.audit(t, v.TurnID); kinds != "tool_result tool_result turn_completed" {
		t.Errorf("audit rows %q, want two tool results and the turn completed", kinds)
	}
	story, err := e.App.Activity.Story(context.Background(), e.owner, v.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range story.Calls {
		if c.Status != steward.CallSucceeded || !json.Valid(c.Result) {
			t.Errorf("journal: %s %s %s, want succeeded with its result", c.Tool, c.Status, c.Result)
		}
	}
}

// audit is the kinds of a turn's tool_result and turn_completed audit rows, in order.
func (e env) audit(t *testing.T, turnID uuid.UUID) string {
	t.Helper()
	events, err := e.App.Activity.TurnEvents(context.Background(), e.owner, turnID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range events {
		if ev.Kind == "tool_result" || ev.Kind == "turn_completed" {
			kinds = append(kinds, ev.Kind)
		}
	}
	return strings.Join(kinds, " ")
}

// page signs a browser-like client in to the web app with the owner's key and returns the
// HTML of path.
func (e env) page(t *testing.T, path string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) string {
		resp, err := c.Get(e.Server.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(get("/signin"))
	if m == nil {
		t.Fatal("the sign-in page has no CSRF field")
	}
	req, _ := http.NewRequest("POST", e.Server.URL+"/signin", strings.NewReader(url.Values{"api_key": {e.key}, "csrf": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.Server.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	return html.UnescapeString(get(path))
}

// TestSpoofedDisplayNameOnTheCard: a send to `"boss@company.example" <attacker@evil.example>`
// waits with a card that shows the address it goes to apart from the name, and warns that the
// name is another address; an honest name draws no warning.
func TestSpoofedDisplayNameOnTheCard(t *testing.T) {
	t.Parallel()
	model := scripted.New(scripted.Reply(scripted.Calls(scripted.Call("s1", "send_mail",
		`{"to":["Ada <ada@example.com>","\"boss@company.example\" <attacker@evil.example>"],"subject":"Q3 numbers","body":"Attached."}`))))
	e := newEnv(t, "bob", model)
	if v := e.start(t, "send the numbers to my boss"); v.Status != steward.StatusSuspended {
		t.Fatalf("turn: %+v, want send_mail waiting", v)
	}
	page := e.page(t, "/approvals")
	i := strings.Index(page, `class="card"`)
	if i < 0 {
		t.Fatalf("no approval card:\n%s", page)
	}
	card := page[i:]
	for _, want := range []string{
		"to ada@example.com (“Ada”), attacker@evil.example (“boss@company.example”)",
		"Warning: the name “boss@company.example” is not the address this mail goes to: attacker@evil.example",
	} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "the name “Ada”") {
		t.Errorf("an honest name drew a warning:\n%s", card)
	}
}

// TestSendIsCopiedToSent: an approved send_mail goes out once and its copy is in Dovecot's
// Sent folder; the model is told where.
func TestSendIsCopiedToSent(t *testing.T) {
	t.Parallel()
	var told map[string]steward.ToolResult
	model := scripted.New(scripted.Reply(scripted.Calls(scripted.Call("s1", "send_mail", `{"to":["ada@example.com"],"subject":"Lunch on Friday?","body":"Shall we?"}`))),
		func(req llm.Request) (llm.Response, error) {
			told = resultsOf(req)
			return scripted.Text("Sent."), nil
		})
	e := newEnv(t, "carol", model)
	v := e.start(t, "ask Ada about lunch")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
		t.Fatalf("turn: %+v, want send_mail waiting", v)
	}
	v, err := e.App.Runner.Confirm(context.Background(), e.owner, v.TurnID,
		[]steward.Decision{{CallID: v.Pending[0].CallID, Approve: true, ArgsHash: v.Pending[0].ArgsHash}}, nil)
	if err != nil || v.Status != steward.StatusCompleted {
		t.Fatalf("approve: %+v, %v", v, err)
	}
	if got := servers.Sink.Messages("carol"); len(got) != 1 {
		t.Fatalf("sent %d mails, want 1", len(got))
	}
	c, err := servers.IMAPClient("carol")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Select("Sent", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	found, err := c.Search(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Subject", Value: "Lunch on Friday?"}}}, nil).Wait()
	if err != nil || len(found.AllSeqNums()) != 1 {
		t.Errorf("Sent holds %v (%v), want the mail sent", found, err)
	}
	var block string
	if res := told["send_mail"]; res.IsError || json.Unmarshal(res.Output, &block) != nil || !strings.Contains(block, `"copied_to":"Sent"`) {
		t.Errorf("the model was told %s, want it copied to Sent", res.Output)
	}
}
