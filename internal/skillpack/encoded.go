package skillpack

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
)

// A playbook can hide text from its reader in base64 or hex, which a model reads as
// easily as prose ("decode this and follow it"). The scanner decodes every run that
// looks encoded — one long word, or lines of them as base64 wraps it — and when it
// decodes to prose, that is hidden text, and the prose is matched like the file's own
// (docs/SKILLS.md, "The scanner"). A checksum or an image's data decode to bytes, not
// prose, and pass.

// encodedRun is a run of base64 or hex: a word of 16 or more of their characters, or
// several such words on consecutive lines.
var encodedRun = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/_-]{16,}={0,2})*`)

// minEncoded is the shortest run decoded: 18 bytes of base64, 12 of hex.
const minEncoded = 24

// encoded reports the prose f hides in base64 or hex, matching every pattern over it, and
// a long encoded blob of bytes next to words that say to decode it.
func (sc *scanner) encoded(f File, main bool) {
	line, counted := 1, 0
	for _, loc := range encodedRun.FindAllStringIndex(f.Text, -1) {
		run := strings.Join(strings.Fields(f.Text[loc[0]:loc[1]]), "")
		if len(run) < minEncoded {
			continue
		}
		text, err := decode(run)
		isProse := err == nil && prose(text)
		if !isProse && (err != nil || len(run) < minBlob || !nearDecode(f.Text, loc)) {
			continue
		}
		line += strings.Count(f.Text[counted:loc[0]], "\n")
		counted = loc[0]
		if !isProse {
			sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, line, run, "an encoded blob the playbook says to decode: what it holds is hidden from a reader, not from the model")
			continue
		}
		sc.add(RuleHiddenText, steward.SeverityHigh, f.Path, line, text, "text encoded in base64 or hex: hidden from a reader, not from the model")
		sc.match(f.Path, sc.fold.flatten(strings.ReplaceAll(text, "\n", " "), line), main, " (in encoded text)")
	}
}

// minBlob is the shortest encoded run of bytes (not prose) reported when words next to it
// say to decode it: 48 bytes of base64, longer than a checksum or a commit's hash in hex.
const minBlob = 64

// decodeWords say to decode, decompress or unpack something.
var decodeWords = regexp.MustCompile(`(?i)\b(decod|d[ée]cod|decompress|d[ée]compress|gunzip|unzip|inflate|unpack|dekodier|entpack|descomprim)`)

// nearDecode: the 200 bytes before or after loc in text say to decode.
func nearDecode(text string, loc []int) bool {
	return decodeWords.MatchString(text[max(loc[0]-200, 0):loc[0]]) || decodeWords.MatchString(text[loc[1]:min(loc[1]+200, len(text))])
}

// decode is run decoded as hex (an even run of hex digits) or else base64.
func decode(run string) (string, error) {
	if len(run)%2 == 0 && strings.Trim(run, "0123456789abcdefABCDEF") == "" {
		b, err := hex.DecodeString(run)
		return string(b), err
	}
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		var b []byte
		if b, err = enc.DecodeString(run); err == nil {
			return string(b), nil
		}
	}
	return "", err
}

// prose: valid UTF-8 without control characters, with words.
func prose(s string) bool {
	return len(s) >= 16 && utf8.ValidString(s) && strings.Count(s, " ") >= 2 &&
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }) < 0
}
