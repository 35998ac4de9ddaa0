package skillpack

import (
	"html"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// Folding turns a file into the text a reader takes it for, so the scanner's patterns
// see through disguises (docs/SKILLS.md, "The scanner"): HTML entities decoded,
// invisible characters removed, NFKC (full-width and mathematical letters), lower case,
// every other letter that looks like a Latin one replaced by it (Unicode's confusables,
// UTS #39, so a Cyrillic "а" is an "a"), accents dropped (French, Spanish and German are
// matched without them), Markdown's markup dropped (headings, quotes, list markers,
// emphasis), and the whole file's words joined by single spaces, so an instruction split
// over lines, sections or headings reads as one.

// smallCaps are the Latin letters that UTS #39's skeletons end on for many Cyrillic and
// Greek look-alikes (к → ĸ, т → ᴛ, н → ʜ) and that a reader takes for the plain letter;
// the confusables table keeps them apart because they are letters of their own.
var smallCaps = map[rune]string{
	'ĸ': "k", 'ᴀ': "a", 'ʙ': "b", 'ᴄ': "c", 'ᴅ': "d", 'ᴇ': "e", 'ɢ': "g", 'ʜ': "h", 'ɪ': "i",
	'ᴊ': "j", 'ᴋ': "k", 'ʟ': "l", 'ᴍ': "m", 'ɴ': "n", 'ᴏ': "o", 'ᴘ': "p", 'ʀ': "r", 'ꜱ': "s",
	'ᴛ': "t", 'ᴜ': "u", 'ᴠ': "v", 'ᴡ': "w", 'ʏ': "y", 'ᴢ': "z",
}

// folder folds text, remembering each rune's folding (a file has few distinct runes).
type folder struct {
	memo map[rune]string
}

func newFolder() *folder { return &folder{memo: map[rune]string{}} }

// line folds one line: entities, invisible characters, NFKC, lower case, look-alikes.
func (fd *folder) line(l string) string {
	if strings.IndexByte(l, '&') >= 0 {
		l = html.UnescapeString(l)
	}
	l = strings.ToLower(norm.NFKC.String(strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, l)))
	ascii := true
	for i := 0; i < len(l) && ascii; i++ {
		ascii = l[i] < 0x80
	}
	if ascii {
		return l
	}
	var b strings.Builder
	for _, r := range l {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		b.WriteString(fd.rune(r))
	}
	return b.String()
}

// rune is r's look-alike in ASCII letters when it has one (a Cyrillic "о", an "é" without
// its accent), nothing for a combining mark, else r itself.
func (fd *folder) rune(r rune) string {
	if v, ok := fd.memo[r]; ok {
		return v
	}
	v := string(r)
	if unicode.Is(unicode.Mn, r) {
		v = ""
	} else {
		var b strings.Builder
		for _, s := range confusables.Skeleton(v) {
			if t, ok := smallCaps[s]; ok {
				b.WriteString(t)
			} else if !unicode.Is(unicode.Mn, s) {
				b.WriteRune(s)
			}
		}
		if sk := strings.ToLower(b.String()); sk != "" && strings.IndexFunc(sk, notLatin) < 0 {
			v = sk
		}
	}
	fd.memo[r] = v
	return v
}

// notLatin: anything but an ASCII letter or digit, an apostrophe or a hyphen (what a
// look-alike may become; « stays «, never "<<").
func notLatin(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '\'' || r == '-')
}

// flat is a file folded into one line of words, and where each source line begins in it.
type flat struct {
	text  string
	first int    // the source line of text's start
	marks []mark // ascending
}

type mark struct{ at, line int }

// flatten folds text (whose first line is line first) into one flat text.
func (fd *folder) flatten(text string, first int) flat {
	var b strings.Builder
	f := flat{first: first}
	for i, l := range strings.Split(text, "\n") {
		lead := true // still at the line's Markdown markers
		for _, w := range strings.Fields(fd.line(l)) {
			if lead && blockMarker(w) {
				continue
			}
			lead = false
			if w = unemphasise(w); w == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			if len(f.marks) == 0 || f.marks[len(f.marks)-1].line != first+i {
				f.marks = append(f.marks, mark{b.Len(), first + i})
			}
			b.WriteString(w)
		}
	}
	f.text = b.String()
	return f
}

// lineAt is the source line of text's byte at.
func (f flat) lineAt(at int) int {
	i := sort.Search(len(f.marks), func(i int) bool { return f.marks[i].at > at }) - 1
	if i < 0 {
		return f.first
	}
	return f.marks[i].line
}

// blockMarker is a word that only marks a Markdown block at a line's start: a heading's
// hashes, a quote's ">", a list item's "-", "*", "+" or "1.", a rule's "---".
func blockMarker(w string) bool {
	if strings.Trim(w, "#>") == "" || strings.Trim(w, "-*_=") == "" || w == "+" {
		return true
	}
	n := strings.TrimRight(w, ".)")
	return len(n) < len(w) && len(n) > 0 && len(n) <= 3 && strings.Trim(n, "0123456789") == ""
}

// unemphasise drops emphasis from a word: every "*" and "~" in a word with a letter
// (CommonMark emphasises inside words with them), "_" at a word's edge, "`" unless the
// word opens a code block.
func unemphasise(w string) string {
	hasLetter := strings.IndexFunc(w, unicode.IsLetter) >= 0
	fence := strings.Contains(w, "```")
	if !hasLetter && !strings.Contains(w, "_") && !strings.Contains(w, "`") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case (c == '*' || c == '~') && hasLetter, c == '`' && !fence:
			continue
		case c == '_' && (i == 0 || i == len(w)-1 || !wordByte(w[i-1]) || !wordByte(w[i+1])):
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// mixedWord is the first word of l that mixes Latin letters with letters of another
// script that look like Latin ones ("Іgnоrе" with a Cyrillic І, о and е): a disguise, as
// no word of any language is written so. "" when there is none.
func (fd *folder) mixedWord(l string) string {
	for _, w := range strings.FieldsFunc(l, func(r rune) bool { return !unicode.IsLetter(r) }) {
		latin, lookalike := false, false
		for _, r := range w {
			switch {
			case unicode.Is(unicode.Latin, r):
				latin = true
			case strings.IndexFunc(fd.rune(unicode.ToLower(r)), notLatin) < 0:
				lookalike = true
			}
		}
		if latin && lookalike {
			return w
		}
	}
	return ""
}

// scripts names the scripts of w's letters other than Latin.
func scripts(w string) string {
	var names []string
	for _, r := range w {
		for _, name := range []string{"Cyrillic", "Greek", "Armenian", "Cherokee"} {
			if unicode.Is(unicode.Scripts[name], r) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return "another script"
	}
	return strings.Join(names, ", ")
}
