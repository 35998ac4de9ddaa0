package main

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/egress/egresstest"
)

// TestReminderDeliveredThroughServe really waits: a reminder set 65 s ahead through the API
// of a running `steward serve` reaches the owner's ntfy (a fake ntfy server) within 60 s of
// its time, and not before it.
func TestReminderDeliveredThroughServe(t *testing.T) {
	t.Parallel()
	type publish struct {
		at   time.Time
		body map[string]any
	}
	got := make(chan publish, 4)
	ntfy := egresstest.NewTLSServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		got <- publish{at: time.Now(), body: v}
		w.WriteHeader(http.StatusOK)
	})
	g := newFakeGemini(t)
	g.set(reply(`[{"text":"ok"}]`))
	env, key, _ := processEnv(t, g)
	env["STEWARD_EGRESS_ALLOW"] = ntfy.Addr().String()
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ntfy.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env["SSL_CERT_FILE"] = certFile
	c := serve(t, env)
	if code, v := c.do(t, "POST", "/v1/channels", key, `{"name":"phone","kind":"ntfy","url":"https://`+ntfy.Addr().String()+`","topic":"steward"}`); code != http.StatusCreated {
		t.Fatalf("add ntfy channel: %d %v", code, v)
	}
	due := time.Now().Add(65 * time.Second).Truncate(time.Second)
	code, r := c.do(t, "POST", "/v1/reminders", key, `{"text":"stretch your legs","at":"`+due.UTC().Format(time.RFC3339)+`"}`)
	if code != http.StatusCreated {
		t.Fatalf("set reminder: %d %v", code, r)
	}
	select {
	case p := <-got:
		late := p.at.Sub(due)
		msg, _ := p.body["message"].(string)
		title, _ := p.body["title"].(string)
		t.Logf("delivered %s after its time: %q %q", late.Round(time.Millisecond), title, msg)
		if late < 0 || late > 60*time.Second {
			t.Fatalf("delivered %s after its time, want within 60 s (and not before)", late)
		}
		if title != "Reminder" || !strings.Contains(msg, "stretch your legs") || p.body["topic"] != "steward" {
			t.Fatalf("ntfy got %v", p.body)
		}
	case <-time.After(time.Until(due) + 70*time.Second):
		t.Fatalf("no notification within 70 s of the reminder's time\n%s", c.out.String())
	}
	if code, v := c.do(t, "GET", "/v1/reminders?all=true", key, ""); code != 200 || !strings.Contains(toJSON(v), `"status":"fired"`) {
		t.Fatalf("reminders after: %d %v", code, v)
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
