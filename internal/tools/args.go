package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The checks a toolset's argument types share (their Check methods): each failure is an
// *ArgError written for the model.

// Defaults and bounds of a max_chars argument: how much text a tool returns at once
// (web_fetch, read_document).
const (
	DefaultMaxChars = 20000
	MaxMaxChars     = 100000
)

// ArgErrorf returns an *ArgError about field with a formatted message.
func ArgErrorf(field, format string, a ...any) *ArgError {
	return &ArgError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// CheckLength checks that s has between lo and hi characters.
func CheckLength(field, s string, lo, hi int) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n < lo && lo == 1:
		return ArgErrorf(field, "must not be empty")
	case n < lo:
		return ArgErrorf(field, "too short (%d characters, at least %d)", n, lo)
	case n > hi:
		return ArgErrorf(field, "too long (%d characters, at most %d)", n, hi)
	}
	return nil
}

// OrDefaultIn sets an optional count left at 0 to def and checks it is from 1 to max.
func OrDefaultIn(field string, v *int, def, max int) error {
	if *v == 0 {
		*v = def
	}
	if *v < 1 || *v > max {
		return ArgErrorf(field, "must be from 1 to %d", max)
	}
	return nil
}

// ParseID parses a UUID argument.
func ParseID(field, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(strings.TrimSpace(s))
	if err != nil {
		return uuid.Nil, &ArgError{Field: field, Msg: QuoteValue(s) + " is not a valid id (a UUID like 123e4567-e89b-12d3-a456-426614174000)", Err: err}
	}
	return id, nil
}

// QuoteValue quotes a value for an error message, shortened so a huge value cannot flood it.
func QuoteValue(s string) string {
	return `"` + truncate(s, 80) + `"`
}
