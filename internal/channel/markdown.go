package channel

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A small reader of the Markdown a model writes in a briefing or a weekly review — headings,
// bullet lists, **bold**, *italic* / _italic_, `code`, [links](https://…) and ``` blocks — and
// one renderer per channel. Anything else is text, escaped for the channel, so a message the
// model got wrong still renders (Telegram refuses a malformed MarkdownV2 message outright).
// A hand-written subset rather than a Markdown module: the Lambda bootstraps are near their cap.

type spanKind int

const (
	spanText spanKind = iota
	spanBold
	spanItalic
	spanCode
	spanLink
)

type span struct {
	kind spanKind
	text string
	url  string // spanLink
}

type blockKind int

const (
	blockLine blockKind = iota // a line of text (an empty one separates paragraphs)
	blockHeading
	blockBullet
	blockCode // a fenced code block: text verbatim
)

type block struct {
	kind  blockKind
	spans []span
	code  string
}

// parseMarkdown reads text line by line into blocks.
func parseMarkdown(text string) []block {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			var code []string
			j := i + 1
			for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```"); j++ {
				code = append(code, lines[j])
			}
			if j < len(lines) { // closed: a code block; unclosed fences are text
				out = append(out, block{kind: blockCode, code: strings.Join(code, "\n")})
				i = j
				continue
			}
		}
		if h := strings.TrimLeft(trimmed, "#"); len(h) < len(trimmed) && len(trimmed)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			spans := parseInline(strings.TrimSpace(h))
			for k := range spans {
				if spans[k].kind == spanText || spans[k].kind == spanItalic {
					spans[k].kind = spanBold
				}
			}
			out = append(out, block{kind: blockHeading, spans: merge(spans)})
			continue
		}
		if len(trimmed) >= 2 && strings.ContainsRune("-*+", rune(trimmed[0])) && trimmed[1] == ' ' {
			out = append(out, block{kind: blockBullet, spans: parseInline(strings.TrimSpace(trimmed[2:]))})
			continue
		}
		out = append(out, block{kind: blockLine, spans: parseInline(strings.TrimRightFunc(line, unicode.IsSpace))})
	}
	return out
}

// parseInline splits a line into flat spans (no nesting: markers inside a span are text).
func parseInline(s string) []span {
	var out []span
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, span{kind: spanText, text: text.String()})
			text.Reset()
		}
	}
	emit := func(sp span) {
		flush()
		out = append(out, sp)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if n := urlAt(s, i); n > 0 { // a bare URL is text, read as nothing else (atoms)
			text.WriteString(s[i : i+n])
			i += n
			continue
		}
		if c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_[]()#+-.!~|>", s[i+1]) >= 0 {
			text.WriteByte(s[i+1])
			i += 2
			continue
		}
		if sp, n := spanAt(s, i); n > 0 {
			emit(sp)
			i += n
			continue
		}
		text.WriteByte(c)
		i++
	}
	flush()
	return merge(out)
}

// spanAt reads the code, bold, italic or link span that starts at s[i]: the span and its
// length in s, or 0 when none does (the character is then text).
func spanAt(s string, i int) (span, int) {
	c := s[i]
	switch {
	case c == '`':
		if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
			return span{kind: spanCode, text: s[i+1 : i+1+j]}, j + 2
		}
	case (c == '*' || c == '_') && strings.HasPrefix(s[i:], string([]byte{c, c})):
		if j := closing(s, i+2, string([]byte{c, c}), c == '_'); j > 0 {
			return span{kind: spanBold, text: s[i+2 : j]}, j + 2 - i
		}
	case c == '*' || c == '_':
		if c == '_' && i > 0 && isWord(s[:i], true) {
			break
		}
		if j := closing(s, i+1, string(c), c == '_'); j > 0 {
			return span{kind: spanItalic, text: s[i+1 : j]}, j + 1 - i
		}
	case c == '[':
		return linkAt(s, i)
	}
	return span{}, 0
}

// linkAt reads a [text](http(s)://url) link at s[i].
func linkAt(s string, i int) (span, int) {
	j := strings.Index(s[i:], "](")
	if j <= 1 {
		return span{}, 0
	}
	k := strings.IndexByte(s[i+j+2:], ')')
	if k <= 0 {
		return span{}, 0
	}
	u := s[i+j+2 : i+j+2+k]
	if (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) && !strings.ContainsAny(u, " \t<>|\"") {
		return span{kind: spanLink, text: s[i+1 : i+j], url: u}, j + 3 + k
	}
	return span{}, 0
}

// urlAt is the length of the bare URL (http or https) starting at s[i], 0 when none does: up
// to a space, <, >, " or `, without trailing punctuation (.,:;!?') or a closing ) or ] it
// does not open.
func urlAt(s string, i int) int {
	rest := s[i:]
	if !strings.HasPrefix(rest, "https://") && !strings.HasPrefix(rest, "http://") || i > 0 && isWord(s[:i], true) {
		return 0
	}
	n := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("<>\"`", r) })
	if n < 0 {
		n = len(rest)
	}
	for n > 0 {
		u := rest[:n]
		switch c := u[n-1]; {
		case strings.IndexByte(".,:;!?'", c) >= 0,
			c == ')' && strings.Count(u, ")") > strings.Count(u, "("),
			c == ']' && strings.Count(u, "]") > strings.Count(u, "["):
			n--
			continue
		}
		break
	}
	if n <= strings.Index(rest, "//")+2 { // a scheme and nothing after it
		return 0
	}
	return n
}

// closing finds the closing delimiter of an emphasis opened before from: non-empty content
// that neither starts nor ends with a space; for _ the closer must not be inside a word.
func closing(s string, from int, delim string, word bool) int {
	if from >= len(s) || s[from] == ' ' {
		return -1
	}
	for j := from + 1; j <= len(s)-len(delim); j++ {
		if !strings.HasPrefix(s[j:], delim) || s[j-1] == ' ' || s[j-1] == '\\' {
			continue
		}
		if len(delim) == 1 && j+1 < len(s) && s[j+1] == delim[0] { // part of a longer run
			j++
			continue
		}
		if word && j+len(delim) < len(s) && isWord(s[j+len(delim):], false) {
			continue
		}
		return j
	}
	return -1
}

// isWord reports whether the last (or first) character of s is a letter or digit.
func isWord(s string, last bool) bool {
	var r rune
	if last {
		r, _ = utf8.DecodeLastRuneInString(s)
	} else {
		r, _ = utf8.DecodeRuneInString(s)
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// merge joins neighbours of the same kind (two italics side by side would read as
// Telegram's underline marker "__").
func merge(in []span) []span {
	var out []span
	for _, sp := range in {
		if n := len(out); n > 0 && sp.kind != spanLink && sp.kind != spanCode && out[n-1].kind == sp.kind {
			out[n-1].text += sp.text
			continue
		}
		out = append(out, sp)
	}
	return out
}

// piece is one unit of rendered output: open, then atoms, then close. A cut keeps open and
// close whole and drops atoms from the end, so it never splits an escape, an entity or a URL.
type piece struct {
	open  string
	atoms []string
	close string
}

// style renders spans and blocks for one channel.
type style struct {
	text            func(r rune) string   // one character of text
	url             func(u string) string // a bare URL in text: u itself, byte for byte, in it
	bold, italic    [2]string
	code            [2]string
	codeAtom        func(r rune) string
	link            func(url string) (open, close string)
	linkAtom        func(r rune) string
	heading, bullet string
	codeBlock       [2]string
}

func atoms(s string, f func(rune) string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, f(r))
	}
	return out
}

// textAtoms are the atoms of text (plain, bold or italic): one per character, and one per
// bare URL (urlAt), which is never escaped, so a cut never splits it.
func (st style) textAtoms(s string) []string {
	out := make([]string, 0, len(s))
	for i := 0; i < len(s); {
		if n := urlAt(s, i); n > 0 {
			out = append(out, st.url(s[i:i+n]))
			i += n
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		out = append(out, st.text(r))
		i += n
	}
	return out
}

func (st style) pieces(blocks []block) []piece {
	var out []piece
	for i, b := range blocks {
		if i > 0 {
			out = append(out, piece{atoms: []string{"\n"}})
		}
		switch b.kind {
		case blockCode:
			out = append(out, piece{open: st.codeBlock[0], atoms: atoms(b.code, st.codeAtom), close: st.codeBlock[1]})
			continue
		case blockHeading:
			out = append(out, piece{open: st.heading})
		case blockBullet:
			out = append(out, piece{open: st.bullet})
		}
		for _, sp := range b.spans {
			switch sp.kind {
			case spanText:
				out = append(out, piece{atoms: st.textAtoms(sp.text)})
			case spanBold:
				out = append(out, piece{open: st.bold[0], atoms: st.textAtoms(sp.text), close: st.bold[1]})
			case spanItalic:
				out = append(out, piece{open: st.italic[0], atoms: st.textAtoms(sp.text), close: st.italic[1]})
			case spanCode:
				out = append(out, piece{open: st.code[0], atoms: atoms(sp.text, st.codeAtom), close: st.code[1]})
			case spanLink:
				open, closer := st.link(sp.url)
				out = append(out, piece{open: open, atoms: atoms(sp.text, st.linkAtom), close: closer})
			}
		}
	}
	return out
}

// fit joins pieces within limit (measured by size); when they do not fit, the output is cut
// after the last whole atom that leaves room for the piece's close and the ellipsis.
func fit(ps []piece, limit int, size func(string) int) string {
	total := 0
	for _, p := range ps {
		total += size(p.open) + size(p.close)
		for _, a := range p.atoms {
			total += size(a)
		}
	}
	var b strings.Builder
	if total <= limit {
		for _, p := range ps {
			b.WriteString(p.open)
			for _, a := range p.atoms {
				b.WriteString(a)
			}
			b.WriteString(p.close)
		}
		return b.String()
	}
	budget := limit - size(ellipsis)
	for _, p := range ps {
		need := size(p.open) + size(p.close)
		if need > budget || (len(p.atoms) > 0 && need+size(p.atoms[0]) > budget) {
			break
		}
		b.WriteString(p.open)
		budget -= need
		whole := true
		for _, a := range p.atoms {
			if size(a) > budget {
				whole = false
				break
			}
			b.WriteString(a)
			budget -= size(a)
		}
		b.WriteString(p.close)
		if !whole {
			break
		}
	}
	return strings.TrimRight(b.String(), " \n") + ellipsis
}

func runes(s string) int   { return utf8.RuneCountInString(s) }
func byteLen(s string) int { return len(s) }

func escaper(special string) func(rune) string {
	return func(r rune) string {
		if strings.ContainsRune(special, r) {
			return "\\" + string(r)
		}
		return string(r)
	}
}

func plainRune(r rune) string { return string(r) }

// telegramStyle is MarkdownV2 (core.telegram.org/bots/api#markdownv2-style): every special
// character of text escaped; inside code only ` and \; inside a link's URL only ) and \.
// A bare URL is a link whose text is the URL: the URL itself is then in the message as sent.
var telegramStyle = style{
	text: escaper(telegramSpecial),
	url: func(u string) string {
		open, closer := telegramLink(u)
		return open + strings.Join(atoms(u, escaper(telegramSpecial)), "") + closer
	},
	bold:      [2]string{"*", "*"},
	italic:    [2]string{"_", "_"},
	code:      [2]string{"`", "`"},
	codeAtom:  escaper("`\\"),
	link:      telegramLink,
	linkAtom:  escaper(telegramSpecial),
	heading:   "",
	bullet:    "• ",
	codeBlock: [2]string{"```\n", "\n```"},
}

func telegramLink(u string) (string, string) {
	return "[", "](" + strings.NewReplacer(`\`, `\\`, `)`, `\)`).Replace(u) + ")"
}

// slackStyle is mrkdwn (api.slack.com/reference/surfaces/formatting): &, < and > escaped
// everywhere, links as <url|text>, a bare URL as <url>.
var slackStyle = func() style {
	esc := func(r rune) string {
		switch r {
		case '&':
			return "&amp;"
		case '<':
			return "&lt;"
		case '>':
			return "&gt;"
		}
		return string(r)
	}
	href := strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C").Replace
	return style{
		text: esc, url: func(u string) string { return "<" + href(u) + ">" },
		bold: [2]string{"*", "*"}, italic: [2]string{"_", "_"}, code: [2]string{"`", "`"}, codeAtom: esc,
		link: func(u string) (string, string) { return "<" + href(u) + "|", ">" },
		linkAtom: func(r rune) string {
			if r == '|' {
				return "¦"
			}
			return esc(r)
		},
		bullet: "• ", codeBlock: [2]string{"```\n", "\n```"},
	}
}()

// ntfyStyle is CommonMark for ntfy's Markdown rendering: only the characters that would start
// emphasis, code or a link are escaped in text; a bare URL is an autolink, <url>, inside
// which nothing is escaped (and a client that shows the text plain shows the URL whole).
var ntfyStyle = style{
	text:     escaper("\\`*_[]<"),
	url:      func(u string) string { return "<" + u + ">" },
	bold:     [2]string{"**", "**"},
	italic:   [2]string{"*", "*"},
	code:     [2]string{"`", "`"},
	codeAtom: func(r rune) string { return string(r) },
	link: func(u string) (string, string) {
		return "[", "](" + strings.NewReplacer("(", "%28", ")", "%29").Replace(u) + ")"
	},
	linkAtom:  escaper("\\`*_[]<"),
	heading:   "### ",
	bullet:    "- ",
	codeBlock: [2]string{"```\n", "\n```"},
}

// plainStyle is text without markup: markers removed, links as "text (url)".
var plainStyle = style{
	text: plainRune, url: func(u string) string { return u }, codeAtom: plainRune, linkAtom: plainRune,
	link:   func(u string) (string, string) { return "", " (" + u + ")" },
	bullet: "• ",
}

// ntfyMarkdownSafe replaces a backtick in code (CommonMark code spans cannot escape one).
func init() {
	ntfyStyle.codeAtom = func(r rune) string {
		if r == '`' {
			return "'"
		}
		return string(r)
	}
}
