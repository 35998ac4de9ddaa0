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

// TelegramText renders a message in MarkdownV2: the title bold, the text's Markdown as
// Telegram entities and everything else escaped, within telegramLimit (counted in UTF-16 code
// units, as Telegram counts, escapes and markers included — a conservative bound).
func TelegramText(title, text string) string {
	var ps []piece
	if title != "" {
		ps = append(ps, piece{open: "*", atoms: atoms(truncateRunes(title, 200), telegramStyle.text), close: "*"}, piece{atoms: []string{"\n\n"}})
	}
	return fit(append(ps, telegramStyle.pieces(parseMarkdown(text))...), telegramLimit, utf16Len)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n++
		}
		n++
	}
	return n
}

// SlackText renders a message in mrkdwn: the title bold, the text's Markdown as *bold*,
// _italic_, `code`, <url|text> links and • bullets; &, < and > escaped as Slack asks
// (api.slack.com/reference/surfaces/formatting#escaping), within slackLimit characters.
func SlackText(title, text string) string {
	var ps []piece
	if title != "" {
		ps = append(ps, piece{open: "*", atoms: atoms(strings.ReplaceAll(truncateRunes(title, 200), "*", ""), slackStyle.text), close: "*"}, piece{atoms: []string{"\n"}})
	}
	return fit(append(ps, slackStyle.pieces(parseMarkdown(text))...), slackLimit, runes)
}

// NtfyText renders the text's Markdown for ntfy (sent with Markdown: yes), within ntfyLimit
// bytes; the title travels in its own field.
func NtfyText(text string) string {
	return fit(ntfyStyle.pieces(parseMarkdown(text)), ntfyLimit, byteLen)
}

// EmailText is the text's Markdown as plain text — markers removed, links as "text (url)",
// bullets as • — within emailLimit bytes.
func EmailText(text string) string {
	return fit(plainStyle.pieces(parseMarkdown(text)), emailLimit, byteLen)
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
