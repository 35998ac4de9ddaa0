package mail_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/egress"
	"github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/steward"
)

// The messages of TestSearchReadFlagMove: plain, HTML with an attachment, and urgent.
const (
	plainMail = "From: Ada <ada@example.com>\r\nTo: erin@example.com\r\nSubject: Train to Köln\r\n" +
		"Date: Mon, 16 Mar 2026 09:00:00 +0100\r\nMessage-ID: <plain@example.com>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nThe train to Köln leaves at ten.\r\n"
	htmlMail = "From: Bank <bank@example.com>\r\nTo: erin@example.com\r\nSubject: Your statement\r\n" +
		"Date: Tue, 17 Mar 2026 09:00:00 +0100\r\nMessage-ID: <html@example.com>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=b1\r\n\r\n--b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" +
		"<p>Your <b>March</b> statement is attached.</p><script>steal()</script>\r\n" +
		"--b1\r\nContent-Type: text/csv; name=march.csv\r\nContent-Disposition: attachment; filename=march.csv\r\n\r\n" +
		"date,amount\r\n2026-03-01,12.50\r\n--b1--\r\n"
	urgentMail = "From: Boss <boss@example.com>\r\nTo: erin@example.com\r\nSubject: Call me\r\n" +
		"Date: Wed, 18 Mar 2026 09:00:00 +0100\r\nMessage-ID: <urgent@example.com>\r\nImportance: high\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\nAs soon as you can.\r\n"
)

// TestSearchReadFlagMove: on a real Dovecot, a search lists the inbox newest first with
// snippets and the sender's urgency; words, unread-only and a folder narrow it; a read gives
// an HTML body as text (no script) and the attachments' names; an attachment's bytes come
// by name, an unknown name is refused naming the ones there are; a flag and a move change
// what the next search sees, and a moved message's old id is gone.
func TestSearchReadFlagMove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, a := client(t, "erin")
	var ids []string
	for _, raw := range []string{plainMail, htmlMail, urgentMail} {
		uid, err := servers.Append("erin", "INBOX", raw)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, mail.ID("INBOX", uid))
	}
	plain, html, urgent := ids[0], ids[1], ids[2]

	all, err := c.Search(ctx, a, steward.MailQuery{})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if got := subjects(all); !slices.Equal(got, []string{"Call me", "Your statement", "Train to Köln"}) {
		t.Fatalf("search = %q; want the three, newest first", got)
	}
	if !all[0].Urgent || all[1].Urgent || !all[0].Unread || all[2].Snippet == "" || !strings.Contains(all[2].Snippet, "ten") {
		t.Errorf("summaries %+v; want the first urgent, all unread, snippets of the text", all)
	}
	if two, err := c.Search(ctx, a, steward.MailQuery{Limit: 2}); err != nil || len(two) != 2 {
		t.Errorf("search limit 2 = %d, %v", len(two), err)
	}
	if found, err := c.Search(ctx, a, steward.MailQuery{Text: "Köln"}); err != nil || !slices.Equal(subjects(found), []string{"Train to Köln"}) {
		t.Errorf("search Köln = %q, %v; want the train", subjects(found), err)
	}

	msg, err := c.Read(ctx, a, html)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !msg.FromHTML || !strings.Contains(msg.Text, "March statement is attached") || strings.Contains(msg.Text, "steal") ||
		len(msg.Attachments) != 1 || msg.Attachments[0].Name != "march.csv" || msg.MessageID != "html@example.com" {
		out, _ := json.Marshal(msg)
		t.Errorf("read = %s; want the HTML as text without its script, and march.csv listed", out)
	}
	f, err := c.AttachmentFile(ctx, a, html, "march.csv", 1<<20)
	if err != nil || !strings.Contains(string(f.Data), "2026-03-01,12.50") || f.Name != "march.csv" {
		t.Errorf("attachment = %+v, %v; want march.csv's bytes", f, err)
	}
	_, err = c.AttachmentFile(ctx, a, html, "april.csv", 1<<20)
	if steward.ErrorCode(err) != steward.CodeNotFound || !strings.Contains(err.Error(), "march.csv") {
		t.Errorf("unknown attachment = %v; want not_found naming march.csv", err)
	}
	if _, err := c.AttachmentFile(ctx, a, plain, "", 1<<20); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("attachment of a message without any = %v; want not_found", err)
	}

	if err := c.Flag(ctx, a, urgent, "seen"); err != nil {
		t.Fatalf("flag seen: %v", err)
	}
	if err := c.Flag(ctx, a, plain, "flagged"); err != nil {
		t.Fatalf("flag flagged: %v", err)
	}
	unread, err := c.Search(ctx, a, steward.MailQuery{Unread: true})
	if err != nil || !slices.Equal(subjects(unread), []string{"Your statement", "Train to Köln"}) {
		t.Errorf("unread after marking one seen = %q, %v", subjects(unread), err)
	}
	if err := c.Flag(ctx, a, plain, "read"); steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "seen") {
		t.Errorf("flag %q = %v; want invalid listing the flags", "read", err)
	}

	moved, err := c.Move(ctx, a, plain, "Archive")
	if err != nil || !strings.HasPrefix(moved, "Archive:") {
		t.Fatalf("move = %q, %v; want its new id in Archive", moved, err)
	}
	archived, err := c.Read(ctx, a, moved)
	if err != nil || archived.Subject != "Train to Köln" || !archived.Flagged {
		t.Errorf("read the moved message = %+v, %v; want the train, still flagged", archived.MailSummary, err)
	}
	if _, err := c.Read(ctx, a, plain); steward.ErrorCode(err) != steward.CodeNotFound {
		t.Errorf("read the old id = %v; want not_found", err)
	}
	if _, err := c.Move(ctx, a, html, "No Such Folder"); steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), "No Such Folder") {
		t.Errorf("move to a missing folder = %v; want invalid naming it", err)
	}
	if inbox, err := c.Search(ctx, a, steward.MailQuery{}); err != nil || len(inbox) != 2 {
		t.Errorf("inbox after the move = %q, %v; want two", subjects(inbox), err)
	}
	for _, bad := range []string{"INBOX", "INBOX:0", "nonsense"} {
		if _, err := c.Read(ctx, a, bad); steward.ErrorCode(err) != steward.CodeInvalid {
			t.Errorf("read %q = %v; want invalid", bad, err)
		}
	}
}

func subjects(s []steward.MailSummary) []string {
	out := make([]string, len(s))
	for i, m := range s {
		out[i] = m.Subject
	}
	return out
}

// TestLogins: the right password logs in on IMAP and SMTP; a wrong one is refused in words,
// never a panic.
func TestLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, a := client(t, "frank")
	if err := c.CheckLogin(ctx, a); err != nil {
		t.Errorf("IMAP login: %v", err)
	}
	if err := c.CheckSMTP(ctx, a); err != nil {
		t.Errorf("SMTP login: %v", err)
	}
	a.Password = "wrong"
	if err := c.CheckLogin(ctx, a); err == nil {
		t.Error("IMAP login with a wrong password succeeded")
	}
	if err := c.CheckSMTP(ctx, a); err == nil {
		t.Error("SMTP login with a wrong password succeeded")
	}
}

// TestCheckRefusesWhatItCannotUse: an account's URLs are checked before any login — not a
// URL, a wrong scheme, a login or path in the URL, a bad port, a private address the guard
// refuses — each an invalid error saying which; the test servers' own pass.
func TestCheckRefusesWhatItCannotUse(t *testing.T) {
	t.Parallel()
	c, a := client(t, "grace")
	if err := c.Check(context.Background(), a); err != nil {
		t.Fatalf("check the test servers: %v", err)
	}
	strict := &mail.Client{Guard: egress.NewGuard(egress.Options{Ports: mail.Ports})}
	for _, tc := range []struct{ imap, smtp, want string }{
		{"mail.example.com", "smtps://mail.example.com", "is not a URL such as imaps://"},
		{"https://mail.example.com", "smtps://mail.example.com", "must start with imaps://"},
		{"imaps://8.8.8.8", "imaps://8.8.8.8", "must start with smtps://"},
		{"imaps://user:pw@mail.example.com", "smtps://mail.example.com", "a scheme, a host and a port only"},
		{"imaps://mail.example.com/INBOX", "smtps://mail.example.com", "a scheme, a host and a port only"},
		{"imaps://mail.example.com:99999", "smtps://mail.example.com", "is not a port"},
		{"imaps://10.0.0.1", "smtps://mail.example.com", "the IMAP server 10.0.0.1 is refused"},
		{"imaps://127.0.0.1:993", "smtps://mail.example.com", "the IMAP server 127.0.0.1 is refused"},
	} {
		err := strict.Check(context.Background(), mail.Account{IMAPURL: tc.imap, SMTPURL: tc.smtp})
		if steward.ErrorCode(err) != steward.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check %s, %s = %v; want invalid saying %q", tc.imap, tc.smtp, err, tc.want)
		}
	}
}
