package agent

import (
	"fmt"
	"regexp"
	"strings"
)

// DataBlock wraps untrusted content — a tool result, web page, webhook body, file or memory
// row — in a delimited block before it enters the model's context. Invisible characters
// (zero-width, bidirectional controls, Unicode tag characters) are removed, and a closing
// delimiter inside the content is escaped so the content cannot end its block early. The
// system prompt states that data blocks never carry instructions.
func DataBlock(source, content string) string {
	content = StripInvisible(content)
	content = closingTag.ReplaceAllString(content, `<\/data>`)
	return fmt.Sprintf("<data source=%q>\n%s\n</data>", StripInvisible(source), content)
}

// closingTag matches anything a model might read as the end of a data block.
var closingTag = regexp.MustCompile(`(?i)<\s*/\s*data\s*>`)

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
