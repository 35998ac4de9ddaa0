package accounts_test

import (
	"context"
	"github.com/stewardhq/steward/internal/steward"
	"strings"
	"testing"
	"time"
)

// TestDemoPhrasing: with the offline demo model (no key) "any new mail", "what's on my
// calendar today" and "send … to …" work against the real servers; the send waits for the
// owner and goes out once approved.
func TestDemoPhrasing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "alice", nil, nil)
	e.append(t, "INBOX", "From: School <office@school.example>\nTo: alice@example.com\nSubject: Parents evening\nDate: "+
		time.Now().Format(time.RFC1123Z)+"\n\nThursday at 6.\n")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Now().In(berlin)
	start := time.Date(now.Year(), now.Month(), now.Day(), 14, 0, 0, 0, berlin)
	if _, err := e.App.Accounts.CreateEvent(context.Background(), e.owner, steward.EventDraft{Title: "Dentist", Location: "Main St", Start: start, End: start.Add(45 * time.Minute)}); err != nil {
		t.Fatal(err)
	}

	v := e.start(t, "any new mail?")
	if v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "You have 1 new message:") ||
		!strings.Contains(v.Answer, "School <office@school.example> — Parents evening") {
		t.Errorf("any new mail: %+v", v)
	}
	v = e.start(t, "What's on my calendar today?")
	if v.Status != steward.StatusCompleted || !strings.Contains(v.Answer, "On your calendar today:\n- 14:00–14:45 Dentist (Main St)") {
		t.Errorf("calendar today: %q", v.Answer)
	}
	v = e.start(t, "send running ten minutes late to ada@example.com")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "send_mail" {
		t.Fatalf("send: %+v, want it waiting", v)
	}
	v, err := e.decide(t, v, true)
	if err != nil || !strings.Contains(v.Answer, "Sent “running ten minutes late” to ada@example.com.") {
		t.Errorf("approved send: %+v, %v", v, err)
	}
	if got := servers.Sink.Messages("alice"); len(got) != 1 || !strings.Contains(string(got[0].Data), "running ten minutes late") {
		t.Errorf("the sink got %d mails", len(got))
	}
}
