package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// DataBlock wraps untrusted content — a tool result, web page, webhook body, file or memory
// row — in a delimited block before it enters the model's context. Invisible characters
// (zero-width, bidirectional controls, Unicode tag characters) are removed, and every data
// tag inside the content (or the source) is escaped, so the content can neither end its
// block early nor open a block of its own claiming another source. The system prompt
// states that data blocks never carry instructions.
func DataBlock(source, content string) string {
	return fmt.Sprintf("<data source=%q>\n%s\n</data>", escapeTags(StripInvisible(source)), escapeTags(StripInvisible(content)))
}

// DataContent is a stored tool result's output as its tool gave it: the content of the data
// block the turn's history wraps every result in (resultsMessage; a JSON string), or the
// output itself when it is not one. The web app words a result from it.
func DataContent(output json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(output, &s) != nil || !strings.HasPrefix(s, "<data source=") {
		return output
	}
	i, j := strings.Index(s, ">\n"), strings.LastIndex(s, "\n</data>")
	if i < 0 || j < i+2 {
		return output
	}
	return json.RawMessage(s[i+2 : j])
}

// dataTag matches the start of anything a model might read as a data block's opening or
// closing tag: a "<" (or its fullwidth and small forms), then "data" (any case, ASCII or
// fullwidth letters), with an optional "/" (or fullwidth "／") between them, and any
// spacing, control or format characters around that slash — whatever follows "data", so
// "</data x>", "<data source=…>", "</DATA\n>" and a "</data" cut at the end all match.
// The letters of "data" themselves must be contiguous, so ordinary text ("x <d at all") is
// left alone.
var dataTag = regexp.MustCompile(`(?i)([<＜﹤])([\p{Z}\p{C}]*[/／]?[\p{Z}\p{C}]*[dｄ][aａ][tｔ][aａ])`)

// escapeTags puts a backslash after the "<" of every data tag ("</data x>" becomes
// "<\/data x>", "<data" becomes "<\data"): no longer a tag, still readable as what the data
// said. Already escaped text does not match again.
func escapeTags(s string) string { return dataTag.ReplaceAllString(s, `$1\$2`) }

// StripInvisible removes characters that hide text from a human reader but not from a model:
// zero-width characters, bidirectional controls and Unicode tag characters.
func StripInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200B && r <= 0x200F, // zero-width space/joiners, LRM, RLM
			r >= 0x202A && r <= 0x202E, // bidi embeddings and overrides
			r >= 0x2060 && r <= 0x2069, // word joiner, invisible operators, bidi isolates
			r == 0xFEFF, r == 0x061C, r == 0x180E, r == 0x00AD,
			r >= 0xE0000 && r <= 0xE007F: // tag characters
			return -1
		}
		return r
	}, s)
}
