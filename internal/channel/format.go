package channel

import (
	"strings"
	"unicode/utf8"
)

// Size limits per channel (docs: Telegram sendMessage text 1–4096 characters after entity
// parsing; ntfy's default message limit 4096 bytes; Slack truncates messages over 40,000
// characters).
const (
	telegramLimit = 4096 // characters
	ntfyLimit     = 4096 // bytes
	slackLimit    = 40000
	emailLimit    = 100_000 // bytes
	webhookLimit  = 100_000 // bytes
)

const ellipsis = "…"

// telegramSpecial are the characters MarkdownV2 needs escaped anywhere in plain text
// (core.telegram.org/bots/api#markdownv2-style).
const telegramSpecial = "_*[]()~`>#+-=|{}.!\\"

// TelegramText renders a message in MarkdownV2: the title bold, every special character of the
// text escaped, within telegramLimit characters (the escapes count towards it).
func TelegramText(title, text string) string {
	var b strings.Builder
	n := 0
	if title != "" {
		t := escapeTelegram(truncateRunes(title, 200))
		b.WriteString("*" + t + "*\n\n")
		n = utf8.RuneCountInString(b.String())
	}
	body := escapeTelegram(text)
	if n+utf8.RuneCountInString(body) <= telegramLimit {
		b.WriteString(body)
		return b.String()
	}
	// Cut the escaped text by whole escapes, leaving room for "\…" (… is not special).
	budget := telegramLimit - n - 1
	for _, r := range text {
		e := escapeTelegram(string(r))
		if c := utf8.RuneCountInString(e); c <= budget {
			b.WriteString(e)
			budget -= c
			continue
		}
		break
	}
	b.WriteString(ellipsis)
	return b.String()
}

func escapeTelegram(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(telegramSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SlackText renders a message in mrkdwn: the title bold; &, < and > escaped as Slack asks
// (api.slack.com/reference/surfaces/formatting#escaping), within slackLimit characters.
func SlackText(title, text string) string {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	s := esc.Replace(text)
	if title != "" {
		s = "*" + esc.Replace(strings.ReplaceAll(title, "*", "")) + "*\n" + s
	}
	return truncateRunes(s, slackLimit)
}

// Plain is the text of a channel without markup: the title on a line of its own.
func Plain(title, text string, maxBytes int) string {
	s := text
	if title != "" {
		s = title + "\n" + text
	}
	return truncateBytes(s, maxBytes)
}

// truncateRunes keeps s within n characters, ending in … when cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + ellipsis
}

// truncateBytes keeps s within n bytes of valid UTF-8, ending in … when cut.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
