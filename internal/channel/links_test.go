package channel_test

import (
	"encoding/json"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/channel"
	"github.com/stewardhq/steward/internal/links"
	"github.com/stewardhq/steward/internal/telegram"
)

// approvalLinks finds link ids whose tokens hold the awkward characters for a Markdown
// renderer — "_" and "-" — at every position a token can hold them, side by side ("__", "--",
// "_-", "-_") and as a pair that reads as emphasis ("_…_"); it returns the stored texts of
// approval notifications naming them (as links.Service.Suspended writes one, at most 16 links
// each, so that every channel sends them whole) and the links the deliverer expands them to
// (links.Service.Expand, the production code). A token is 32 bytes in unpadded base64url, 43 characters whose last holds 4 bits and
// two zero bits (one of AEIMQUYcgkosw048): "_" and "-" can be anywhere but there. The search
// is deterministic: ids count up from zero.
func approvalLinks(t *testing.T, svc *links.Service) (stored, want []string) {
	t.Helper()
	const tokenLen = 43
	shapes := map[string]bool{}
	for _, c := range "_-" {
		for i := range tokenLen - 1 {
			shapes[fmt.Sprintf("%c at %d", c, i)] = true
		}
	}
	for _, pair := range []string{"__", "--", "_-", "-_", "_…_"} {
		shapes[pair] = true
	}
	covers := func(tok string) []string {
		var out []string
		for i, c := range tok {
			if c == '_' || c == '-' {
				out = append(out, fmt.Sprintf("%c at %d", c, i))
			}
		}
		for _, pair := range []string{"__", "--", "_-", "-_"} {
			if strings.Contains(tok, pair) {
				out = append(out, pair)
			}
		}
		// "_…_": a "_" that may open emphasis (after the "/" or a "-"), then text, then one
		// that may close it (before a "-").
		open := -1
		if i := strings.Index(tok, "-_"); strings.HasPrefix(tok, "_") {
			open = 0
		} else if i >= 0 {
			open = i + 1
		}
		if closer := strings.LastIndex(tok, "_-"); open >= 0 && closer > open+1 {
			out = append(out, "_…_")
		}
		return out
	}
	var b strings.Builder
	var id uuid.UUID
	for n := uint64(0); len(shapes) > 0 && n < 100_000; n++ {
		for i := range 8 {
			id[15-i] = byte(n >> (8 * i))
		}
		ph := fmt.Sprintf("[one-tap link %s]", id)
		link := svc.Expand(ph)
		if link == ph {
			t.Fatal("Expand left the placeholder: the links service has no public URL or key")
		}
		tok := link[strings.LastIndex(link, "/")+1:]
		if len(tok) != tokenLen {
			t.Fatalf("token %q is not %d characters", tok, tokenLen)
		}
		fresh := false
		for _, s := range covers(tok) {
			fresh = fresh || shapes[s]
			delete(shapes, s)
		}
		if !fresh {
			continue
		}
		if len(want)%16 == 0 {
			if b.Len() > 0 {
				stored = append(stored, b.String()+"\n\nEach link opens a page to confirm; it works once.")
				b.Reset()
			}
			b.WriteString("Steward is waiting for your approval of 1 action:\n• create_task: title=\"buy_milk\"\n")
		}
		label := "Approve"
		if len(want)%2 == 1 {
			label = "Deny"
		}
		fmt.Fprintf(&b, "\n%s: %s", label, ph)
		want = append(want, link)
	}
	if len(shapes) > 0 {
		t.Fatalf("found no token for %d of the shapes: %v", len(shapes), shapes)
	}
	stored = append(stored, b.String()+"\n\nEach link opens a page to confirm; it works once.")
	return stored, want
}

// TestApprovalLinksSentVerbatim: approval notifications' approve and deny links reach every
// kind of channel byte for byte — never Markdown-escaped ("\_", "\-", "\.") — in the text
// its client is sent: ntfy's message, Telegram's and Slack's text, the webhook's text and
// message, the email's decoded body.
func TestApprovalLinksSentVerbatim(t *testing.T) {
	t.Parallel()
	ntfy, tg, slack, hook := newFake(t), newFake(t), newFake(t), newFake(t)
	smtp := newSMTPServer(t, testCert(t), false)
	e := newEnv(t, key, ntfy.Addr(), tg.Addr(), slack.Addr(), hook.Addr(), smtp.Addr())
	e.add(t, channel.Input{Name: "phone", Kind: "ntfy", URL: ntfy.url(""), Topic: "alerts"})
	e.add(t, channel.Input{Name: "tg", Kind: "telegram", URL: tg.url(""), Token: tgToken, ChatID: "7"})
	e.add(t, channel.Input{Name: "team", Kind: "slack", URL: slack.url("/services/T0/B0/xyzsecret")})
	e.add(t, channel.Input{Name: "hook", Kind: "webhook", URL: hook.url("/in")})
	e.add(t, channel.Input{Name: "mail", Kind: "email", Host: "example.com", Port: int(smtp.Addr().Port()),
		From: "steward@example.com", To: "me@example.com"})

	svc := &links.Service{PublicURL: "https://steward.example.com/my_steward-1", Key: []byte("link-key-0123456789abcdef-0123456")}
	stored, want := approvalLinks(t, svc)
	d := e.deliverer(3)
	d.Expand, d.Buttons = svc.Expand, telegram.Buttons(svc)
	for _, ch := range []string{"phone", "tg", "team", "hook", "mail"} {
		for _, text := range stored {
			e.notify(t, ch, "Approval needed", text)
		}
	}
	for range 3 { // a flush claims at most 20 notifications
		if err := d.Flush(e.ctx, e.owner); err != nil {
			t.Fatal(err)
		}
	}

	jsonField := func(f *fake, field string) []string {
		t.Helper()
		var out []string
		for _, r := range f.delivered() {
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil {
				t.Fatal(err)
			}
			s, _ := m[field].(string)
			out = append(out, s)
		}
		return out
	}
	sent := map[string][]string{
		"ntfy message":    jsonField(ntfy, "message"),
		"telegram text":   jsonField(tg, "text"),
		"slack text":      jsonField(slack, "text"),
		"webhook text":    jsonField(hook, "text"),
		"webhook message": jsonField(hook, "message"),
	}
	smtp.mu.Lock()
	data := append([]string(nil), smtp.data...)
	smtp.mu.Unlock()
	for _, raw := range data {
		msg, err := mail.ReadMessage(strings.NewReader(strings.ReplaceAll(raw, "\r\n..", "\r\n.")))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		if err != nil {
			t.Fatal(err)
		}
		sent["email body"] = append(sent["email body"], string(body))
	}

	for where, texts := range sent {
		if len(texts) != len(stored) {
			t.Errorf("%s: %d deliveries, want %d", where, len(texts), len(stored))
			continue
		}
		all := strings.Join(texts, "\n\n")
		var missing []string
		for _, link := range want {
			if !strings.Contains(all, link) {
				missing = append(missing, link)
			}
		}
		if len(missing) > 0 {
			var sent []string // the lines of links that are not one of the links
			for line := range strings.Lines(all) {
				if strings.Contains(line, "/a/") && !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(line, l) }) {
					sent = append(sent, strings.TrimSpace(line))
				}
			}
			t.Errorf("%s lacks %d of the %d links, such as\n%s\nthe lines that have none:\n%s", where, len(missing), len(want), missing[0], strings.Join(sent, "\n"))
		}
	}
}
