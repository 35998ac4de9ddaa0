package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestSuspendedChatNotifiesAtOnce: under `steward serve` (RunBackground running), a chat
// turn that suspends notifies the owner's default channel (a fake ntfy) within a second of
// the chat's response — not at the scheduler's next tick, a minute later — and exactly once,
// although the scheduler's tick (which drains deliveries too) runs after it.
func TestSuspendedChatNotifiesAtOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	ntfy := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	})
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
	fake := httptest.NewServer(geminifake.New())
	defer fake.Close()
	db := testdb.New(t)
	ctx := context.Background()
	a, err := build(ctx, loadConfig(t, map[string]string{"APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL,
		"GEMINI_API_KEY": "AIza-test", "GEMINI_BASE_URL": fake.URL}), settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The channel senders trust the fake's certificate and reach its loopback address only.
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	pool := probe.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	probe.Close()
	sender := &channel.Sender{Options: egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{ntfy.Addr()}, RootCAs: pool}, Timeout: 5 * time.Second}
	a.Channels.Sender, a.Deliverer.Sender = sender, sender
	owner, key, err := adminDoor(t, &db).CreateOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Channels.Add(ctx, owner.ID, channel.Input{Name: "phone", Kind: "ntfy", URL: fmt.Sprintf("https://example.com:%d", ntfy.Addr().Port()), Topic: "t", Default: true}); err != nil {
		t.Fatal(err)
	}
	bg, stop := context.WithCancel(ctx)
	returned := make(chan struct{})
	go func() { defer close(returned); _ = a.RunBackground(bg) }()
	defer func() { stop(); <-returned }()
	time.Sleep(200 * time.Millisecond) // RunBackground's first tick drains now; nothing is due yet

	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat", strings.NewReader(`{"message":"add buy milk"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	answered := time.Now()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"suspended"`) {
		t.Fatalf("chat: %d %s, want a suspended turn", resp.StatusCode, body)
	}
	for len(sent()) == 0 && time.Since(answered) < time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(sent()); n != 1 {
		t.Fatalf("%d notifications within a second of the chat's answer, want 1", n)
	}
	if !strings.Contains(sent()[0], "buy milk") {
		t.Errorf("the notification does not name the write waiting: %q", sent()[0])
	}
	// The scheduler's tick drains deliveries too: the notification was already delivered.
	if _, err := a.Scheduler.Handle(ctx, autonomy.Event{ScheduledTime: a.Now().Truncate(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(sent()); n != 1 {
		t.Errorf("%d notifications after the scheduler's tick, want exactly 1", n)
	}
}
