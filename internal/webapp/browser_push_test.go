package webapp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/channel/pushtest"
	"github.com/stewardhq/steward/internal/delivery"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/llm/demo"
	"github.com/stewardhq/steward/internal/safety"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/toolstest"
	"github.com/stewardhq/steward/internal/webapp"
)

// fakePushManager replaces only the browser's push endpoint: headless Chromium has no push
// service to subscribe with, so PushManager.subscribe answers a subscription on the test's
// fake push service with the test browser's keys, and records the applicationServerKey the
// page passed (which must be the server's VAPID key). Permission, the service worker, the
// page's script and everything after are the real ones.
const fakePushManager = `(function () {
  var sub = null;
  PushManager.prototype.getSubscription = function () { return Promise.resolve(sub); };
  PushManager.prototype.subscribe = function (opts) {
    var key = new Uint8Array(opts.applicationServerKey);
    var b64 = btoa(String.fromCharCode.apply(null, key)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    window.__subscribedWith = b64;
    var json = JSON.parse(window.name);
    sub = { endpoint: json.endpoint, options: { applicationServerKey: key.buffer },
      toJSON: function () { return json; }, unsubscribe: function () { sub = null; return Promise.resolve(true); } };
    return Promise.resolve(sub);
  };
})();`

// TestBrowserPushApprove: in Chromium, Settings → Notify this device saves this browser's
// subscription as a webpush channel (the subscription made with the server's VAPID key);
// a suspended turn's encrypted push, decrypted by the fake push service, is delivered to the
// real service worker (ServiceWorker.deliverPushMessage), which shows it with Approve and
// Deny; its Approve decides the turn once, and a second Approve says the link was used.
func TestBrowserPushApprove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 10)
	reg, err := tools.NewRegistry(toolstest.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	key := []byte("0123456789abcdef0123456789abcdef")
	// The runner's hook is the service's own Issuer: the public URL set once the server
	// listens reaches the links it writes.
	approvals := &links.Service{Store: o.Store, Door: door, Issuer: links.Issuer{Key: key, TTL: 30 * time.Minute}}
	runner := agent.New(agent.Config{Model: demo.New(), Tools: reg, Store: o.Store, Gate: &safety.Gate{}, MaxIterations: 4, SuspendTTL: time.Hour, Control: &safety.Control{GlobalCost: o.Door.GlobalCostToday}},
		agent.Hooks{Suspended: []func(context.Context, agent.Tx, steward.Turn) (bool, error){approvals.Suspended}})
	approvals.Confirmer = runner
	public, private := pushtest.VAPIDKeys(t)
	push := pushtest.NewService(t, public)
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	roots := probe.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	probe.Close()
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{push.Addr()}, RootCAs: roots}
	sender := &channel.Sender{Options: opts, Timeout: 5 * time.Second,
		VAPID: &channel.VAPID{PublicKey: public, PrivateKey: private, Subject: "mailto:ops@example.com"}}
	sealer, err := secret.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	channels := &channel.Service{Store: o.Store, Sealer: sealer, Sender: sender}
	deliver := &delivery.Deliverer{Store: o.Store, Guard: egress.NewGuard(opts), Sealer: sealer, Sender: sender,
		Expand: approvals.Expand, Actions: approvals.Actions}
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: runner, Store: o.Store, Auth: door, Logger: zerolog.Nop(),
		Links: webapp.LinkPages(approvals, ""),
		Web:   webapp.Routes(withServices(webapp.Deps{Runner: runner, Store: o.Store, Door: door, Logger: zerolog.Nop(), Channels: channels}))}))
	t.Cleanup(srv.Close)
	approvals.PublicURL = srv.URL
	alice, aliceKey := o.Owner(t, "alice")
	b := pushtest.NewBrowser(t)
	subJSON, _ := jsonString(b.Subscription(push.Endpoint(b)))

	bctx := browser(t)
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var realSubscribe string
	step("sign in and see the real push service's answer",
		signIn(srv.URL, aliceKey),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: srv.URL})
			return err
		}),
		chromedp.Navigate(srv.URL+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`#push-subscribe`)),
		// What the real PushManager does headless, for the record (it has no push service).
		browsertest.Into(&realSubscribe, chromedp.Evaluate[string](`Promise.race([
			navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready).then(r =>
				r.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: document.getElementById("push").dataset.vapidKey}))
				.then(s => "subscribed: " + s.endpoint, e => "refused: " + e.name + ": " + e.message),
			new Promise(r => setTimeout(() => r("no answer within 5 s"), 5000))])`, chromedp.EvalAwaitPromise)))
	t.Logf("headless Chromium's own PushManager.subscribe: %s", realSubscribe)

	// Only the push endpoint is replaced (fakePushManager); window.name carries the test's
	// subscription into the page.
	var status, usedKey string
	step("notify this device",
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakePushManager})
			return err
		}),
		js(`window.name = `+quote(subJSON)),
		chromedp.Navigate(srv.URL+"/settings"),
		chromedp.WaitVisible(chromedp.CSS(`#push-subscribe`)),
		chromedp.SetValue(chromedp.CSS(`#push-name`), "laptop"),
		chromedp.Click(chromedp.CSS(`#push-subscribe`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("push-status").textContent.indexOf("Done") === 0`, chromedp.WithPollingTimeout(10*time.Second)),
		browsertest.Into(&status, chromedp.Text(chromedp.CSS(`#push-status`))),
		browsertest.Into(&usedKey, chromedp.Evaluate[string](`window.__subscribedWith || ""`)))
	browsertest.Shot(t, bctx, "settings-push-desktop.png")
	if !strings.Contains(status, `“laptop”`) || usedKey != public {
		t.Fatalf("status %q, subscribed with key %q; want laptop saved, subscribed with the server's VAPID key %q", status, usedKey, public)
	}
	list, err := channels.List(ctx, alice.ID)
	if err != nil || len(list) != 1 || list[0].Name != "laptop" || list[0].Kind != channel.WebPush || !list[0].Default {
		t.Fatalf("alice's channels = %+v, %v; want the webpush channel laptop, her default", list, err)
	}

	// A write waits; its push reaches the fake push service, which decrypts it.
	step("ask for a write", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		send("remind me to buy milk"), chromedp.WaitVisible(chromedp.CSS(`fieldset.card`)))
	if err := deliver.Flush(ctx, alice.ID); err != nil {
		t.Fatal(err)
	}
	pushes := push.Pushes()
	if r := push.Refused(); len(r) > 0 || len(pushes) != 1 {
		t.Fatalf("pushes %d, refused %v; want one push taken", len(pushes), r)
	}

	// The decrypted payload is delivered to the real service worker's push handler.
	regs := make(chan serviceworker.RegistrationID, 8)
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			for _, r := range e.Registrations {
				if !r.IsDeleted && strings.HasPrefix(r.ScopeURL, srv.URL) {
					select {
					case regs <- r.RegistrationID:
					default:
					}
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(bctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	var regID serviceworker.RegistrationID
	select {
	case regID = <-regs:
	case <-time.After(10 * time.Second):
		t.Fatal("no service worker registration reported")
	}
	if _, err := chromedp.Call(bctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
		Origin: srv.URL, RegistrationID: regID, Data: string(pushes[0].Raw)}); err != nil {
		t.Fatal(err)
	}
	var shown string
	step("the notification shows", browsertest.Into(&shown, chromedp.Evaluate[string](`(async () => {
		const reg = await navigator.serviceWorker.ready;
		for (let i = 0; i < 300; i++) { // 30 s: a loaded machine shows it late
			const ns = await reg.getNotifications();
			if (ns.length) return ns.map(n => n.title + " | " + n.body + " | " + n.actions.map(a => a.action + ":" + a.title).join(",")).join("\n");
			await new Promise(r => setTimeout(r, 100));
		}
		return "";
	})()`, chromedp.EvalAwaitPromise)))
	if !strings.HasPrefix(shown, "Approval needed | ") || !strings.Contains(shown, `create_task: title="buy milk"`) || !strings.HasSuffix(shown, "approve:Approve,deny:Deny") {
		t.Fatalf("notification shown = %q; want Approval needed with the call's summary and Approve, Deny", shown)
	}

	// Tap Approve twice, in the service worker itself (a synthetic notificationclick on the
	// real notification; its waitUntil is captured, as only a trusted event may extend).
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatal(err)
	}
	var sw chromedp.ContextOption
	for _, ti := range targets {
		if ti.Type == "service_worker" && ti.URL == srv.URL+"/sw.js" {
			sw = chromedp.WithTargetID(ti.TargetID)
		}
	}
	if sw == nil {
		t.Fatalf("no service worker target among %d targets", len(targets))
	}
	swctx, cancel := chromedp.NewContext(bctx, sw)
	defer cancel()
	var outcomes []string
	err = chromedp.Do(swctx, browsertest.Into(&outcomes, chromedp.Evaluate[[]string](`(async () => {
		const n = (await self.registration.getNotifications()).find(x => x.title === "Approval needed");
		const click = async (action) => {
			let p = null;
			const ev = new NotificationEvent("notificationclick", {notification: n, action: action});
			ev.waitUntil = (x) => { p = x; };
			self.dispatchEvent(ev);
			await p;
		};
		await click("approve");
		await click("approve");
		return (await self.registration.getNotifications()).map(x => x.title + ": " + x.body);
	})()`, chromedp.EvalAwaitPromise)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Approved: Done. Steward went on with the turn.", "Not decided: This approval link was already used. Nothing was changed."}
	if strings.Join(outcomes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notifications after two Approve taps = %q; want %q", outcomes, want)
	}
	if got := tasksOf(t, o, alice); len(got) != 1 || got[0] != "buy milk" {
		t.Errorf("tasks = %v; want buy milk once", got)
	}

	// A tap on the body opens the approvals page in the app's window.
	var where string
	var ignored any
	err = chromedp.Do(swctx, browsertest.Into(&ignored, chromedp.Evaluate[any](`(async () => {
		const n = (await self.registration.getNotifications())[0];
		let p = null;
		const ev = new NotificationEvent("notificationclick", {notification: n});
		ev.waitUntil = (x) => { p = x; };
		self.dispatchEvent(ev);
		await p;
	})()`, chromedp.EvalAwaitPromise)))
	if err != nil {
		t.Fatal(err)
	}
	step("the body opens the approvals", chromedp.Poll[chromedp.Void](`location.pathname === "/approvals"`, chromedp.WithPollingTimeout(10*time.Second)),
		browsertest.Into(&where, chromedp.Location()))
	if !strings.HasSuffix(where, "/approvals") {
		t.Errorf("after a tap on the body the page is %s, want /approvals", where)
	}
}

// jsonString is v as JSON.
func jsonString(v any) (string, error) { b, err := json.Marshal(v); return string(b), err }

// quote is s as a JavaScript string literal.
func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
