package channel_test

import (
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/channel"
)

// briefing is a morning briefing as the model writes it.
const briefing = `## Today
- **Overdue:** pay the electricity bill (due 28 Nov)
- Call _Dr. Weber_ at 10:30 — see [the letter](https://example.com/letters/42?a=1&b=2)
- Renew ` + "`passport`" + ` (1 task)

Waiting for approval: 2 payments (50.00 EUR + 12.50 EUR).
Mail & calendar are not connected yet.`

// TestBriefingPerChannel: the same Markdown briefing reaches each fake server rendered for
// that channel — Telegram MarkdownV2 entities with the rest escaped, Slack mrkdwn, ntfy
// Markdown with its Markdown header, email as plain text with the links spelled out.
func TestBriefingPerChannel(t *testing.T) {
	t.Parallel()
	ntfy, tg, slack := newFake(t), newFake(t), newFake(t)
	smtp := newSMTPServer(t, testCert(t), false)
	e := newEnv(t, key, ntfy.Addr(), tg.Addr(), slack.Addr(), smtp.Addr())
	e.add(t, channel.Input{Name: "phone", Kind: "ntfy", URL: ntfy.url(""), Topic: "alerts"})
	e.add(t, channel.Input{Name: "tg", Kind: "telegram", URL: tg.url(""), Token: tgToken, ChatID: "7"})
	e.add(t, channel.Input{Name: "team", Kind: "slack", URL: slack.url("/services/T0/B0/x")})
	e.add(t, channel.Input{Name: "mail", Kind: "email", Host: "example.com", Port: int(smtp.Addr().Port()),
		From: "steward@example.com", To: "me@example.com", Username: "me", Password: smtpPass})
	for _, ch := range []string{"phone", "tg", "team", "mail"} {
		e.notify(t, ch, "Morning briefing", briefing)
	}
	if err := e.deliverer(3).Flush(e.ctx, e.owner); err != nil {
		t.Fatal(err)
	}
	field := func(f *fake, k string) string {
		t.Helper()
		got := f.delivered()
		if len(got) != 1 {
			t.Fatalf("%d deliveries", len(got))
		}
		var m map[string]any
		if err := json.Unmarshal(got[0].body, &m); err != nil {
			t.Fatal(err)
		}
		s, _ := m[k].(string)
		return s
	}
	for _, c := range []struct{ name, got, want string }{
		{"telegram", field(tg, "text"), "*Morning briefing*\n\n*Today*\n" +
			"• *Overdue:* pay the electricity bill \\(due 28 Nov\\)\n" +
			"• Call _Dr\\. Weber_ at 10:30 — see [the letter](https://example.com/letters/42?a=1&b=2)\n" +
			"• Renew `passport` \\(1 task\\)\n\n" +
			"Waiting for approval: 2 payments \\(50\\.00 EUR \\+ 12\\.50 EUR\\)\\.\nMail & calendar are not connected yet\\."},
		{"slack", field(slack, "text"), "*Morning briefing*\n*Today*\n" +
			"• *Overdue:* pay the electricity bill (due 28 Nov)\n" +
			"• Call _Dr. Weber_ at 10:30 — see <https://example.com/letters/42?a=1&amp;b=2|the letter>\n" +
			"• Renew `passport` (1 task)\n\n" +
			"Waiting for approval: 2 payments (50.00 EUR + 12.50 EUR).\nMail &amp; calendar are not connected yet."},
		{"ntfy", field(ntfy, "message"), "### **Today**\n" +
			"- **Overdue:** pay the electricity bill (due 28 Nov)\n" +
			"- Call *Dr. Weber* at 10:30 — see [the letter](https://example.com/letters/42?a=1&b=2)\n" +
			"- Renew `passport` (1 task)\n\n" +
			"Waiting for approval: 2 payments (50.00 EUR + 12.50 EUR).\nMail & calendar are not connected yet."},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
	if h := ntfy.delivered()[0].header.Get("Markdown"); h != "yes" || !strings.Contains(string(ntfy.delivered()[0].body), `"markdown":true`) {
		t.Errorf("ntfy without Markdown: header %q, body %s", h, ntfy.delivered()[0].body)
	}
	if field(tg, "parse_mode") != "MarkdownV2" {
		t.Error("telegram without parse_mode MarkdownV2")
	}
	smtp.mu.Lock()
	defer smtp.mu.Unlock()
	if len(smtp.data) != 1 {
		t.Fatalf("smtp got %d messages", len(smtp.data))
	}
	_, raw, _ := strings.Cut(smtp.data[0], "\r\n\r\n")
	raw = strings.ReplaceAll(raw, "\r\n..", "\r\n.") // the fake keeps SMTP's dot-stuffing
	body, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(raw)))
	want := "Today\n• Overdue: pay the electricity bill (due 28 Nov)\n" +
		"• Call Dr. Weber at 10:30 — see the letter (https://example.com/letters/42?a=1&b=2)\n" +
		"• Renew passport (1 task)\n\nWaiting for approval: 2 payments (50.00 EUR + 12.50 EUR).\nMail & calendar are not connected yet."
	if got := strings.TrimRight(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n"); got != want {
		t.Errorf("email:\n got %q\nwant %q", got, want)
	}
}

// validMarkdownV2 checks what Telegram checks: every special character outside an entity
// escaped, entities closed, code and link URLs escaped as they must be.
func validMarkdownV2(s string) bool {
	const special = "_*[]()~`>#+-=|{}.!\\"
	var bold, italic, inLink bool
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\':
			if i+1 >= len(rs) || !strings.ContainsRune(special, rs[i+1]) {
				return false
			}
			i++
		case r == '`':
			for i++; i < len(rs) && rs[i] != '`'; i++ {
				if rs[i] == '\\' {
					i++
				}
			}
			if i >= len(rs) {
				return false
			}
		case r == '*':
			bold = !bold
		case r == '_':
			italic = !italic
		case r == '[' && !inLink:
			inLink = true
		case r == ']' && inLink && i+1 < len(rs) && rs[i+1] == '(':
			for i += 2; i < len(rs) && rs[i] != ')'; i++ {
				if rs[i] == '\\' {
					i++
				}
			}
			if i >= len(rs) {
				return false
			}
			inLink = false
		case strings.ContainsRune(special, r):
			return false
		}
	}
	return !bold && !italic && !inLink
}

// TestMarkdownEdges: malformed Markdown is escaped text (never a message Telegram refuses),
// snake_case is not italic, a link that is not http(s) stays text.
func TestMarkdownEdges(t *testing.T) {
	for _, c := range []struct{ in, telegram, slack, email string }{
		{"Price *not closed and [broken](link", "Price \\*not closed and \\[broken\\]\\(link",
			"Price *not closed and [broken](link", "Price *not closed and [broken](link"},
		{"file_name_here, 2 * 3", "file\\_name\\_here, 2 \\* 3", "file_name_here, 2 * 3", "file_name_here, 2 * 3"},
		{"[x](javascript:alert(1)) `a\\b`", "\\[x\\]\\(javascript:alert\\(1\\)\\) `a\\\\b`",
			"[x](javascript:alert(1)) `a\\b`", "[x](javascript:alert(1)) a\\b"},
		{"# Title!\n* item\n```\nx = `y`\n```", "*Title\\!*\n• item\n```\nx = \\`y\\`\n```",
			"*Title!*\n• item\n```\nx = `y`\n```", "Title!\n• item\nx = `y`"},
	} {
		if got := channel.TelegramText("", c.in); !validMarkdownV2(got) {
			t.Errorf("telegram %q: %q is not valid MarkdownV2", c.in, got)
		}
		if got := channel.TelegramText("", c.in); got != c.telegram {
			t.Errorf("telegram %q:\n got %q\nwant %q", c.in, got, c.telegram)
		}
		if got := channel.SlackText("", c.in); got != c.slack {
			t.Errorf("slack %q:\n got %q\nwant %q", c.in, got, c.slack)
		}
		if got := channel.EmailText(c.in); got != c.email {
			t.Errorf("email %q:\n got %q\nwant %q", c.in, got, c.email)
		}
	}
}

// TestBriefingCuts: a briefing far over each limit is cut at a whole character, escape,
// entity or link — Telegram's output still valid MarkdownV2 and within 4096 UTF-16 units,
// Slack's links whole, ntfy and email within their bytes and valid UTF-8.
func TestBriefingCuts(t *testing.T) {
	long := strings.Repeat(briefing+" 🎉\n", 200)
	tg := channel.TelegramText("Morning briefing", long)
	if n := len(utf16.Encode([]rune(tg))); n > 4096 || n < 4000 || !strings.HasSuffix(tg, "…") || !validMarkdownV2(strings.TrimSuffix(tg, "…")) {
		t.Errorf("telegram cut: %d units, valid %v, ends %q", n, validMarkdownV2(strings.TrimSuffix(tg, "…")), tg[len(tg)-40:])
	}
	// A cut that falls inside a link keeps the link's URL whole.
	link := channel.TelegramText("", strings.Repeat("x", 4040)+" [a long link text, longer than what is left](https://example.com/x)")
	if !strings.HasSuffix(link, "](https://example.com/x)…") || !validMarkdownV2(strings.TrimSuffix(link, "…")) || utf8.RuneCountInString(link) > 4096 {
		t.Errorf("telegram link cut: …%q", link[len(link)-80:])
	}
	sl := channel.SlackText("Morning briefing", strings.Repeat(briefing+"\n", 2000))
	if n := utf8.RuneCountInString(sl); n > 40000 || n < 39900 || !strings.HasSuffix(sl, "…") || strings.Count(sl, "<") != strings.Count(sl, ">") {
		t.Errorf("slack cut: %d characters, %d < and %d >", n, strings.Count(sl, "<"), strings.Count(sl, ">"))
	}
	for name, c := range map[string]struct {
		s   string
		max int
	}{"ntfy": {channel.NtfyText(long), 4096}, "email": {channel.EmailText(strings.Repeat(long, 5)), 100_000}} {
		if len(c.s) > c.max || len(c.s) < c.max-100 || !utf8.ValidString(c.s) || !strings.HasSuffix(c.s, "…") {
			t.Errorf("%s cut: %d bytes, valid %v", name, len(c.s), utf8.ValidString(c.s))
		}
	}
}

// TestBareURLsVerbatim: a bare URL is never escaped or read as Markdown — underscores,
// asterisks and dashes in it, in a sentence, a bullet, a heading or bold text — in any
// channel's text; the punctuation after it stays outside it, and Telegram's text is still
// valid MarkdownV2.
func TestBareURLsVerbatim(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, url string }{
		{"Approve: https://s.example.com/my_steward-1/a/_ab_-cd__e-", "https://s.example.com/my_steward-1/a/_ab_-cd__e-"},
		{"see https://x.example/a_b_c.", "https://x.example/a_b_c"},
		{"(see https://x.example/-_x_-/y)", "https://x.example/-_x_-/y"},
		{"- item https://x.example/**not bold**/z, then text", "https://x.example/**not"},
		{"## Links https://x.example/h_1_", "https://x.example/h_1_"},
		{"**bold https://x.example/b_o_ld** and _it https://x.example/i_t_ ok_", "https://x.example/b_o_ld"},
		{"_it https://x.example/i-t_ ok_", "https://x.example/i-t"},
		{"a https://x.example/w?q=a_b&r=(c)#f_g!", "https://x.example/w?q=a_b&r=(c)#f_g"},
	} {
		for name, got := range map[string]string{
			"telegram": channel.TelegramText("Title", c.in), "slack": channel.SlackText("Title", c.in),
			"ntfy": channel.NtfyText(c.in), "email": channel.EmailText(c.in),
		} {
			want := c.url
			switch name { // the escapes the format demands, which the client reads back to the URL
			case "slack":
				want = strings.ReplaceAll(want, "&", "&amp;")
			case "telegram":
				want = "](" + strings.NewReplacer(`\`, `\\`, `)`, `\)`).Replace(want) + ")"
			}
			if !strings.Contains(got, want) {
				t.Errorf("%s of %q lacks %s:\n%s", name, c.in, want, got)
			}
			if name == "telegram" && !validMarkdownV2(got) {
				t.Errorf("telegram of %q is not valid MarkdownV2: %s", c.in, got)
			}
		}
	}
	// The punctuation after a URL is the sentence's, and a bare scheme is text.
	if got := channel.EmailText("see https://x.example/a. Or http://"); got != "see https://x.example/a. Or http://" {
		t.Errorf("email = %q", got)
	}
	if got := channel.NtfyText("see https://x.example/a_b. Or (https://y.example/c)"); got != `see <https://x.example/a_b>. Or (<https://y.example/c>)` {
		t.Errorf("ntfy = %q", got)
	}
	if got := channel.TelegramText("", "see https://x.example/a_b."); got != `see [https://x\.example/a\_b](https://x.example/a_b)\.` {
		t.Errorf("telegram = %q", got)
	}
	if got := channel.SlackText("", "see https://x.example/a_b."); got != `see <https://x.example/a_b>.` {
		t.Errorf("slack = %q", got)
	}
}
