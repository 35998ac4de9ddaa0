package mail_test

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/mailtest"
	"github.com/stewardhq/steward/internal/steward"
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

// folderSubjects is the subjects of the messages in user's folder, read on Dovecot.
func folderSubjects(t *testing.T, user, folder string) []string {
	t.Helper()
	c, err := servers.IMAPClient(user)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sel, err := c.Select(folder, nil).Wait()
	if err != nil {
		t.Fatalf("select %s: %v", folder, err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	var all imap.SeqSet
	all.AddRange(1, 0) // 1:*
	msgs, err := c.Fetch(all, &imap.FetchOptions{Envelope: true, Flags: true}).Collect()
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	var out []string
	for _, m := range msgs {
		if !slices.Contains(m.Flags, imap.FlagSeen) {
			t.Errorf("%q in %s is unread", m.Envelope.Subject, folder)
		}
		out = append(out, m.Envelope.Subject)
	}
	return out
}

// TestSentIsCopiedToSent: a mail SMTP accepted is put in the account's Sent folder (its
// special-use \Sent mailbox), read; the answer says where.
func TestSentIsCopiedToSent(t *testing.T) {
	t.Parallel()
	c, a := client(t, "carol")
	sent, err := c.Send(context.Background(), a, steward.OutgoingMail{To: []string{"ada@example.com"}, Subject: "Minutes", Body: "Here they are."}, time.Now())
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if got := servers.Sink.Messages("carol"); len(got) != 1 {
		t.Fatalf("the SMTP server received %d mails", len(got))
	}
	if got := folderSubjects(t, "carol", "Sent"); !slices.Equal(got, []string{"Minutes"}) {
		t.Errorf("Sent holds %q, want the mail sent", got)
	}
	if out, _ := json.Marshal(sent); !strings.Contains(string(out), `"copied_to":"Sent"`) {
		t.Errorf("send answered %s, want it to say it was copied to Sent", out)
	}
}

// TestSentButNotCopied: when the copy to Sent fails (the IMAP server cannot be reached), the
// mail SMTP accepted is still sent, and the answer says it was not copied, and why.
func TestSentButNotCopied(t *testing.T) {
	t.Parallel()
	c, a := client(t, "dave")
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := closed.Addr().String()
	closed.Close()
	c.Guard = egress.NewGuard(egress.Options{Allow: append(servers.Allow(), netip.MustParseAddrPort(dead)), Ports: mail.Ports})
	a.IMAPURL = "imap://" + dead
	sent, err := c.Send(context.Background(), a, steward.OutgoingMail{To: []string{"ada@example.com"}, Subject: "Agenda", Body: "Attached."}, time.Now())
	if err != nil {
		t.Fatalf("send: %v, want it sent", err)
	}
	if got := servers.Sink.Messages("dave"); len(got) != 1 {
		t.Fatalf("the SMTP server received %d mails", len(got))
	}
	if out, _ := json.Marshal(sent); !strings.Contains(string(out), `"not_copied":"sent, but not copied to the Sent folder: `) ||
		!strings.Contains(string(out), "cannot connect") {
		t.Errorf("send answered %s, want it sent but not copied, and why", out)
	}
}
