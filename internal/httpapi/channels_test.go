package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/secret"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/egress/egresstest"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestChannelRoutes: POST /v1/channels sets up a channel (201) without echoing its secret;
// GET lists it without the secret; bad channels are 422 (an unknown field 400) and a taken
// name 409, storing nothing; the test route reports the delivery; DELETE removes it (204, then 404).
func TestChannelRoutes(t *testing.T) {
	t.Parallel()
	var got []string
	tg := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) { got = append(got, r.URL.Path) })
	db := testdb.Open(t, 4)
	_, key := db.Owner(t, "alice")
	sealer, _ := secret.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	opts := egress.Options{Lookup: egresstest.Lookup, Allow: []netip.AddrPort{tg.Addr()},
		RootCAs: tg.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	svc := &channel.Service{Store: db.Store, Sealer: sealer, Sender: &channel.Sender{Options: opts, Timeout: 5 * time.Second}}
	srv := httptest.NewServer(httpapi.New(withServices(httpapi.Deps{Store: db.Store, Auth: db.Door, Logger: zerolog.Nop(), Channels: svc})))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) response {
		return doHTTP(t, srv.URL, request{method: method, path: path, key: key, body: body})
	}
	token := "123456:ABCdefGHIjklMNOpqrSTUvwxYZ0123456789_-"
	base := fmt.Sprintf("https://example.com:%d", tg.Addr().Port())
	add := fmt.Sprintf(`{"name":"tg","kind":"telegram","url":%q,"token":%q,"chat_id":"42"}`, base, token)
	if resp := do("POST", "/v1/channels", add); resp.status != 201 || strings.Contains(string(resp.body), token) ||
		!strings.Contains(string(resp.body), `"has_secret":true`) {
		t.Fatalf("add: %d %s", resp.status, resp.body)
	}
	for _, bad := range []struct {
		body   string
		status int
	}{
		{add, 409},
		{`{"name":"x","kind":"telegram","token":"1:short","chat_id":"42"}`, 422},
		{`{"name":"y","kind":"webhook","url":"https://10.1.2.3/hook"}`, 422},
		{`{"name":"z","kind":"carrier-pigeon"}`, 422},
		{`{"name":"w","kind":"webhook","url":"https://example.com/","surprise":1}`, 400},
	} {
		if resp := do("POST", "/v1/channels", bad.body); resp.status != bad.status {
			t.Errorf("add %s: %d %s; want %d", bad.body, resp.status, resp.body, bad.status)
		}
	}
	resp := do("GET", "/v1/channels", "")
	var list struct{ Channels []channel.View }
	if err := json.Unmarshal(resp.body, &list); err != nil || resp.status != 200 || len(list.Channels) != 1 ||
		list.Channels[0].ChatID != "42" || !list.Channels[0].Default || strings.Contains(string(resp.body), token) ||
		strings.Contains(string(resp.body), "ABCdefGHI") {
		t.Errorf("list: %d %s", resp.status, resp.body)
	}
	if resp := do("POST", "/v1/channels/tg/test", ""); resp.status != 200 || !strings.Contains(string(resp.body), `"delivered":true`) ||
		len(got) != 1 || got[0] != "/bot"+token+"/sendMessage" {
		t.Errorf("test: %d %s; the fake got %v", resp.status, resp.body, got)
	}
	// The test is an attempt in the delivery feed, without the token.
	if resp := do("GET", "/v1/notifications/deliveries", ""); resp.status != 200 || strings.Contains(string(resp.body), token) ||
		!strings.Contains(string(resp.body), `"kind":"notification.delivered"`) || !strings.Contains(string(resp.body), `"channel":"tg"`) {
		t.Errorf("deliveries: %d %s", resp.status, resp.body)
	}
	if resp := do("POST", "/v1/channels/nope/test", ""); resp.status != 404 {
		t.Errorf("test unknown: %d %s", resp.status, resp.body)
	}
	hook := fmt.Sprintf(`{"name":"hook","kind":"webhook","url":%q}`, base+"/hook")
	if resp := do("POST", "/v1/channels", hook); resp.status != 201 || strings.Contains(string(resp.body), `"default":true`) {
		t.Fatalf("add hook: %d %s", resp.status, resp.body)
	}
	if resp := do("POST", "/v1/channels/nope/default", ""); resp.status != 404 {
		t.Errorf("default unknown: %d %s", resp.status, resp.body)
	}
	if resp := do("POST", "/v1/channels/hook/default", ""); resp.status != 200 || !strings.Contains(string(resp.body), `"default":true`) {
		t.Errorf("default: %d %s", resp.status, resp.body)
	}
	if resp := do("GET", "/v1/channels", ""); strings.Count(string(resp.body), `"default":true`) != 1 ||
		!strings.Contains(string(resp.body), `"name":"hook","kind":"webhook","default":true`) {
		t.Errorf("list after default: %s", resp.body)
	}
	if resp := do("DELETE", "/v1/channels/tg", ""); resp.status != 204 {
		t.Errorf("delete: %d %s", resp.status, resp.body)
	}
	if resp := do("DELETE", "/v1/channels/tg", ""); resp.status != 404 {
		t.Errorf("delete again: %d %s", resp.status, resp.body)
	}
}
