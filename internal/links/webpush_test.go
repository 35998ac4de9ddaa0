package links_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/channel/pushtest"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
)

// pushEnv is env with a fake push service on loopback, alice's browser subscribed to it as
// her default channel "phone", and the deliverer that sends to it.
type pushEnv struct {
	*env
	push     *pushtest.Service
	channels *channel.Service
	deliver  *delivery.Deliverer
}

func setupPush(t *testing.T) *pushEnv {
	t.Helper()
	e := setup(t, false)
	public, private := pushtest.VAPIDKeys(t)
	push := pushtest.NewService(t, public)
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	roots := probe.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	probe.Close()
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{push.Addr()}, RootCAs: roots}
	sender := &channel.Sender{Options: opts, Timeout: 5 * time.Second,
		VAPID: &channel.VAPID{PublicKey: public, PrivateKey: private, Subject: "mailto:ops@example.com"}}
	sealer, err := secret.NewSealer([]byte("fedcba9876543210fedcba9876543210"))
	if err != nil {
		t.Fatal(err)
	}
	channels := &channel.Service{Store: e.o.Store, Sealer: sealer, Sender: sender}
	browser := pushtest.NewBrowser(t)
	v, err := channels.Add(context.Background(), e.owner.ID, channel.Input{Name: "phone", Kind: channel.WebPush, Subscription: browser.Subscription(push.Endpoint(browser))})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Default || v.URL != "https://example.com:"+itoa(push.Addr().Port()) || !v.HasSecret {
		t.Errorf("the webpush channel = %+v; want the default, showing only the push service's origin, its endpoint and keys sealed", v)
	}
	d := &delivery.Deliverer{Store: e.o.Store, Guard: egress.NewGuard(opts), Sealer: sealer, Sender: sender,
		Expand: e.svc.Expand, Actions: e.svc.Actions}
	return &pushEnv{env: e, push: push, channels: channels, deliver: d}
}

func itoa(n uint16) string { return strconv.Itoa(int(n)) }

// post POSTs a one-tap link as the service worker does (Accept: application/json).
func post(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("POST %s: the answer is not JSON: %v", url, err)
	}
	return resp.StatusCode, body
}

// TestWebPushApproveDecidesOnce: a suspended turn sends one encrypted push, signed with the
// deployment's VAPID key, that the fake push service decrypts with the browser's key; it
// shows the write's summary and carries Approve and Deny with the one-tap links. The Approve
// link, POSTed as the service worker does, decides the turn once; a second use is refused in
// words; another flush sends nothing again.
func TestWebPushApproveDecidesOnce(t *testing.T) {
	t.Parallel()
	e := setupPush(t)
	ctx := context.Background()
	turn, approve, deny := e.suspend(t)
	if err := e.deliver.Flush(ctx, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	if r := e.push.Refused(); len(r) > 0 {
		t.Fatalf("the push service refused: %v", r)
	}
	pushes := e.push.Pushes()
	if len(pushes) != 1 {
		t.Fatalf("pushes = %d, want 1", len(pushes))
	}
	p := pushes[0].Payload
	if p.Title != "Approval needed" || !strings.Contains(p.Body, `create_task: title="buy milk"`) || p.URL != "/approvals" {
		t.Errorf("push = %+v; want the title, the call's summary and the approvals page", p)
	}
	if strings.Contains(p.Body, "one-tap link") || strings.Contains(p.Body, "/a/") || strings.Contains(p.Body, "Each link opens") {
		t.Errorf("push body %q still has the link lines; they are the actions", p.Body)
	}
	if len(p.Actions) != 2 || p.Actions[0] != (channel.Action{Action: "approve", Title: "Approve", URL: approve}) ||
		p.Actions[1] != (channel.Action{Action: "deny", Title: "Deny", URL: deny}) {
		t.Fatalf("actions = %+v; want Approve %s and Deny %s", p.Actions, approve, deny)
	}
	if got := pushes[0].Header.Get("Urgency"); got != "high" {
		t.Errorf("Urgency = %q, want high", got)
	}

	status, body := post(t, p.Actions[0].URL)
	if status != http.StatusOK || body["decided"] != true {
		t.Fatalf("approve = %d %v; want decided", status, body)
	}
	if tasks, st := e.state(t, turn); tasks != 1 || st != steward.StatusCompleted {
		t.Errorf("after approve: %d tasks, turn %s; want 1 task, completed", tasks, st)
	}
	status, body = post(t, p.Actions[0].URL)
	if status != http.StatusGone || body["decided"] != false || body["message"] != "This approval link was already used. Nothing was changed." {
		t.Errorf("second approve = %d %v; want 410 saying the link was already used", status, body)
	}
	status, body = post(t, p.Actions[1].URL)
	if status != http.StatusGone || body["decided"] != false || !strings.Contains(body["message"].(string), "Nothing was changed") {
		t.Errorf("deny after approve = %d %v; want refused, nothing changed", status, body)
	}
	if tasks, _ := e.state(t, turn); tasks != 1 {
		t.Errorf("tasks after the refused uses = %d, want 1", tasks)
	}
	if err := e.deliver.Flush(ctx, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(e.push.Pushes()); n != 1 {
		t.Errorf("pushes after a second flush = %d, want still 1 (one push per notification)", n)
	}
}

// TestWebPushGoneSubscription: a push service that answers 410 has dropped the subscription:
// the channel is marked gone (and says so in the list), and nothing more is sent to it.
func TestWebPushGoneSubscription(t *testing.T) {
	t.Parallel()
	e := setupPush(t)
	ctx := context.Background()
	e.push.Answer(http.StatusGone)
	e.suspend(t)
	if err := e.deliver.Flush(ctx, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	list, err := e.channels.List(ctx, e.owner.ID)
	if err != nil || len(list) != 1 || list[0].GoneAt == "" {
		t.Fatalf("channels after 410 = %+v, %v; want phone marked gone", list, err)
	}
	res, err := e.channels.Test(ctx, e.owner.ID, "phone")
	if err != nil || res.Delivered || !strings.Contains(res.Error, "410") || !strings.Contains(res.Error, "Notify this device") {
		t.Errorf("test of the gone channel = %+v, %v; want not delivered, saying the push service answered 410 and what to do", res, err)
	}
	hits := e.push.Hits.Load()
	if _, err := e.run.Start(ctx, agent.Input{OwnerID: e.owner.ID, Message: "remind me to buy bread"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.deliver.Flush(ctx, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.push.Hits.Load(); got != hits {
		t.Errorf("the push service got %d more requests after the subscription was gone; want none", got-hits)
	}
}

// TestWebPushRefusedInWords: a webpush channel this server cannot send, a malformed
// subscription, or a browser already subscribed is refused in words, and nothing is stored.
func TestWebPushRefusedInWords(t *testing.T) {
	t.Parallel()
	e := setupPush(t)
	ctx := context.Background()
	b := pushtest.NewBrowser(t)
	good := b.Subscription(e.push.Endpoint(b))
	bad := *good
	bad.Keys.Auth = "short"
	for _, c := range []struct {
		name string
		sub  *channel.Subscription
		svc  *channel.Service
		want string
	}{
		{"no-subscription", nil, e.channels, "needs the browser's subscription"},
		{"bad-auth", &bad, e.channels, "auth secret is not 16 bytes"},
		{"http", &channel.Subscription{Endpoint: "http://example.com/x", Keys: good.Keys}, e.channels, "not an https URL"},
		{"no-vapid", good, &channel.Service{Store: e.channels.Store, Sealer: e.channels.Sealer, Sender: &channel.Sender{}}, "STEWARD_VAPID_PUBLIC_KEY"},
	} {
		_, err := c.svc.Add(ctx, e.owner.ID, channel.Input{Name: c.name, Kind: channel.WebPush, Subscription: c.sub})
		if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want invalid with %q", c.name, err, c.want)
		}
	}
	if _, err := e.channels.Add(ctx, e.owner.ID, channel.Input{Name: "tablet", Kind: channel.WebPush, Subscription: good}); err != nil {
		t.Fatal(err)
	}
	_, err := e.channels.Add(ctx, e.owner.ID, channel.Input{Name: "again", Kind: channel.WebPush, Subscription: good})
	if steward.ErrorCode(err) != steward.CodeConflict || !strings.Contains(err.Error(), `already notifies you as the channel "tablet"`) {
		t.Errorf("the same browser again: %v; want a conflict naming tablet", err)
	}
	if list, _ := e.channels.List(ctx, e.owner.ID); len(list) != 2 {
		t.Errorf("channels = %+v; want phone and tablet only", list)
	}
}
