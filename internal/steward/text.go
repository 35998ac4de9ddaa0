package steward

import (
	"strings"
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
