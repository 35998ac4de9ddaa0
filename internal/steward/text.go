package steward

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText refuses a client's text that PostgreSQL cannot store: a NUL character (text and
// jsonb cannot hold U+0000) or bytes that are not UTF-8. field names the value in the
// CodeInvalid error.
func CheckText(field, s string) error {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return Errorf(CodeInvalid, "%s contains a NUL character (\\u0000), which cannot be stored", field)
	case !utf8.ValidString(s):
		return Errorf(CodeInvalid, "%s is not valid UTF-8", field)
	}
	return nil
}

// CheckName trims a name someone gives a thing Steward stores and shows (a document, a
// rule's note) and refuses, with a client error saying why, one that is empty, not UTF-8,
// longer than maxChars characters, or that holds a control character or an invisible
// formatting one (Unicode category Cf: the bidirectional overrides that show
// "fdp.exe.txt" as "txt.exe.pdf", zero-width spaces, a byte-order mark). The zero-width
// joiner and non-joiner stay allowed: scripts and emoji need them. what names the thing
// ("the document's name").
func CheckName(what, name string, maxChars int) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", Errorf(CodeInvalid, "%s is empty", what)
	case !utf8.ValidString(name):
		return "", Errorf(CodeInvalid, "%s is not UTF-8 text", what)
	case utf8.RuneCountInString(name) > maxChars:
		return "", Errorf(CodeInvalid, "%s is longer than %d characters", what, maxChars)
	}
	if i := strings.IndexFunc(name, hidden); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return "", Errorf(CodeInvalid, "%s contains an invisible character (%U) that can disguise what it says; remove it", what, r)
	}
	return name, nil
}

// hidden is a control character or an invisible formatting one other than the zero-width
// joiner and non-joiner.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d'
}

// Visible is s with its control and invisible formatting characters (as CheckName finds
// them) shown as their code points, "⟨U+202E⟩": for text from outside (a tool's arguments
// on an approval card) that a person must read as it is.
func Visible(s string) string {
	if strings.IndexFunc(s, disguising) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if disguising(r) {
			fmt.Fprintf(&b, "⟨%U⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// disguising is a character Visible shows as its code point: hidden, other than a line break
// or a tab, which text shown on a card keeps.
func disguising(r rune) bool { return hidden(r) && r != '\n' && r != '\t' }

// ArgsSummary is a call's arguments in one readable line, as a notification, an approval button's
// message or a household request shows them: key=value pairs in key order, strings quoted (%q
// shows invisible characters as escapes), each value and the whole line cut short.
func ArgsSummary(args json.RawMessage) string {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil || len(m) == 0 {
		return cut(string(args), 200)
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		var v string
		switch x := m[k].(type) {
		case string:
			v = fmt.Sprintf("%q", cut(x, 80))
		default:
			b, _ := json.Marshal(x)
			v = cut(string(b), 80)
		}
		parts[i] = Visible(k) + "=" + v
	}
	return cut(strings.Join(parts, ", "), 300)
}

// cut is s cut to n characters, "…" added when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
