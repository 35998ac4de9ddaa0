package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckStorable refuses arguments Postgres cannot store as they came — a NUL (\u0000 or a
// raw 0 byte), an unpaired UTF-16 surrogate escape, bytes that are not UTF-8 (jsonb and text
// refuse them, SQLSTATE 22P05, 22P02, 22021) — with an *ArgError naming the argument, for the
// model or client to correct. Every tool's validation runs it first (decodeArgs), and the
// loop runs it on a model's calls before their message is kept (docs/ARCHITECTURE.md §2).
func CheckStorable(raw json.RawMessage) *ArgError {
	fault := textFault(raw)
	if fault == "" {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return &ArgError{Msg: "the arguments' text " + fault}
	}
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if strings.IndexByte(k, 0) >= 0 {
			return &ArgError{Msg: "the name of argument " + strconv.QuoteToASCII(k) + " contains a NUL byte (\\u0000)"}
		}
		if f := textFault(args[k]); f != "" {
			return &ArgError{Msg: "argument " + k + " " + f}
		}
	}
	return &ArgError{Msg: "an argument's name " + fault}
}

// textFault says what in a JSON text Postgres cannot store, or "" when nothing.
func textFault(b []byte) string {
	const nul = "contains a NUL byte (\\u0000)"
	switch {
	case !utf8.Valid(b):
		return "is not valid UTF-8"
	case bytes.IndexByte(b, 0) >= 0:
		return nul
	}
	// A backslash is only ever inside a string, and an escape is two bytes or \uXXXX: stepping
	// over each escape whole, no "\\u0000" (a backslash, then text) is read as one.
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++
		v, ok := hex4(b, i)
		if !ok {
			continue
		}
		i += 4
		switch {
		case v == 0:
			return nul
		case v >= 0xD800 && v < 0xDC00:
			if i+2 < len(b) && b[i+1] == '\\' {
				if w, ok := hex4(b, i+2); ok && w >= 0xDC00 && w < 0xE000 {
					i += 6
					continue
				}
			}
			return fmt.Sprintf("contains an unpaired surrogate escape (\\u%04x)", v)
		case v >= 0xDC00 && v < 0xE000:
			return fmt.Sprintf("contains an unpaired surrogate escape (\\u%04x)", v)
		}
	}
	return ""
}

// hex4 reads the XXXX of a \uXXXX escape whose u is at b[i].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 >= len(b) || b[i] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 16)
	return rune(v), err == nil
}

// Storable returns a tool's result (or any JSON text Steward stores) in a form Postgres
// stores: raw itself when CheckStorable finds nothing to refuse, else Scrub(raw) — every NUL,
// unpaired surrogate and byte that is not UTF-8 as U+FFFD. A result is a stranger's text (a
// mail's subject, a page) and nobody can correct it, so it is repaired, never refused: the
// loop runs it on every result before the journal and the turn's messages keep it
// (docs/ARCHITECTURE.md §2).
func Storable(raw json.RawMessage) json.RawMessage {
	if textFault(raw) == "" {
		return raw
	}
	return Scrub(raw)
}

// Scrub returns arguments CheckStorable refused in a form Postgres stores: every NUL, unpaired
// surrogate and byte that is not UTF-8 in a name or a value becomes U+FFFD (what the model sent,
// as near as can be kept); arguments that are not JSON become {}.
func Scrub(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(bytes.ReplaceAll(raw, []byte{0}, nil)))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil { // decoding already turns bad bytes and lone surrogates into U+FFFD
		return json.RawMessage(`{}`)
	}
	out, err := json.Marshal(scrubValue(v))
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

func scrubValue(v any) any {
	switch x := v.(type) {
	case string:
		return ScrubText(x)
	case []any:
		for i := range x {
			x[i] = scrubValue(x[i])
		}
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[ScrubText(k)] = scrubValue(e)
		}
		return m
	}
	return v
}

// ScrubText is s with every NUL and byte that is not UTF-8 replaced by U+FFFD.
func ScrubText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}
