package tools

import (
	"regexp"
	"strings"
)

// host is a dotted name a chat client would make a link of ("evil.example", "a.b.co/x"):
// labels of letters, digits and hyphens, the last one of letters, then maybe a port, path,
// query or fragment.
var host = regexp.MustCompile(`(?i)^(?:[\p{L}\p{N}-]+\.)+\p{L}{2,}(?:[:/?#].*)?$`)

// Links returns the words of text a reader's client or a chat service would take for a link —
// anything with a scheme ("https://…", "mailto:…"), "www.…" or a dotted host name, but not a
// mail address (a sender a briefing names; opening one fetches nothing) — trimmed of the punctuation around them. It errs on the side
// of a link: a tainted turn asks the owner before such a word leaves (docs/SECURITY.md,
// "Notifications carry no previews").
func Links(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		w = TrimWord(w)
		lower := strings.ToLower(w)
		switch {
		case w == "":
		case strings.Contains(w, "://"), strings.HasPrefix(lower, "www."), strings.HasPrefix(lower, "mailto:"),
			host.MatchString(w):
			out = append(out, w)
		}
	}
	return out
}

// TrimWord trims the punctuation a word of prose may have around a link: brackets, quotes
// and the end of a sentence.
func TrimWord(w string) string {
	return strings.TrimRight(strings.Trim(w, "<>()[]{}\"'`,;!?*_"), ".:")
}
