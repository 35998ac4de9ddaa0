package mail_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/mailtest"
)

var (
	servers     *mailtest.Servers
	serversErr  error
	serversOnce sync.Once
)

// TestMain stops the package's Dovecot, Radicale and SMTP sink when a test started them
// (started on first use: a fuzz worker or a benchmark of the parser starts none).
func TestMain(m *testing.M) {
	code := m.Run()
	if servers != nil {
		servers.Stop()
	}
	os.Exit(code)
}

// client is a mail client whose guard lets it reach the test's servers, and user's account.
func client(t *testing.T, user string) (*mail.Client, mail.Account) {
	t.Helper()
	serversOnce.Do(func() { servers, serversErr = mailtest.Start() })
	if serversErr != nil {
		t.Fatalf("mailtest: %v", serversErr)
	}
	c := &mail.Client{Guard: egress.NewGuard(egress.Options{Allow: servers.Allow(), Ports: mail.Ports})}
	return c, mail.Account{IMAPURL: servers.IMAPURL(), SMTPURL: servers.SMTPURL(), Username: user,
		Password: mailtest.Users[user], From: user + "@example.com"}
}

// TestDeeplyNestedMIME: a message of 12,000 nested multiparts (about 830 KB) is read: its
// text, and the answer says parts nested deeper than the limit were not read. Its cost is
// BenchmarkParseNested's.
func TestDeeplyNestedMIME(t *testing.T) {
	t.Parallel()
	c, a := client(t, "alice")
	uid, err := servers.Append("alice", "INBOX", mail.NestedMessage(12000))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Read(context.Background(), a, mail.ID("INBOX", uid))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	out, _ := json.Marshal(msg)
	if strings.TrimSpace(msg.Text) != "Hello at the top." || !strings.Contains(string(out), "nested deeper than 32 levels") {
		t.Errorf("read_mail answered %s, want the text and that parts nested deeper than 32 levels were not read", out)
	}
}
