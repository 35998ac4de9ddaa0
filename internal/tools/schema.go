package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// MaxArgsBytes bounds the size of the arguments of one call.
const MaxArgsBytes = 64 << 10

// schemaFor derives the JSON Schema of the argument struct A. Besides what jsonschema.For
// reads (json names, omitempty, `jsonschema` descriptions) it applies `enum:"a,b"` tags of
// top-level string fields.
func schemaFor[A any]() (*jsonschema.Schema, error) {
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments type %v is not a struct", t)
	}
	s, err := jsonschema.For[A](nil)
	if err != nil {
		return nil, fmt.Errorf("derive schema: %w", err)
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for _, f := range reflect.VisibleFields(t) {
		tag, ok := f.Tag.Lookup("enum")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		p := s.Properties[name]
		if p == nil || p.Type != "string" {
			return nil, fmt.Errorf("enum tag on %s: only string fields can have one", f.Name)
		}
		for v := range strings.SplitSeq(tag, ",") {
			p.Enum = append(p.Enum, v)
		}
	}
	return s, nil
}

// canonicalSchema serialises a schema deterministically.
func canonicalSchema(s *jsonschema.Schema) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return Canonical(b)
}

// decodeArgs validates raw against the resolved schema, decodes it into an A and runs A's
// Checker. Empty arguments and null mean {}; arguments Postgres cannot store are refused
// first (CheckStorable). Every failure is an *ArgError.
func decodeArgs[A any](rs *jsonschema.Resolved, raw json.RawMessage) (A, error) {
	var a A
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxArgsBytes {
		return a, ArgErrorf("", "arguments are too large (%d bytes, at most %d)", len(raw), MaxArgsBytes)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if e := CheckStorable(raw); e != nil {
		return a, e
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return a, &ArgError{Msg: "arguments are not valid JSON: " + err.Error(), Err: err}
	}
	if err := rs.Validate(v); err != nil {
		return a, &ArgError{Msg: validationMessage(err, rs.Schema()), Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, &ArgError{Msg: "arguments do not match the schema: " + err.Error(), Err: err}
	}
	if c, ok := any(&a).(Checker); ok {
		if err := c.Check(); err != nil {
			if _, ok := errors.AsType[*ArgError](err); ok {
				return a, err
			}
			return a, &ArgError{Msg: err.Error(), Err: err}
		}
	}
	return a, nil
}

var (
	reProperty   = regexp.MustCompile(`validating /properties/([^:/]+): `)
	reRequired   = regexp.MustCompile(`required: missing properties: \[(.*?)\]`)
	reAdditional = regexp.MustCompile(`unexpected additional properties \[(.*?)\]`)
	reEnum       = regexp.MustCompile(`enum: (?s:(.*)) does not equal any of: \[(.*?)\]`)
	reType       = regexp.MustCompile(`type: (?s:.*) has type "(\w+)", want "(\w+)"`)
)

// validationMessage turns a jsonschema validation error into a sentence for the model.
func validationMessage(err error, s *jsonschema.Schema) string {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	msg = reProperty.ReplaceAllString(msg, "$1: ")
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null")
	msg = reRequired.ReplaceAllString(msg, "missing required argument(s) $1")
	if reAdditional.MatchString(msg) {
		msg = reAdditional.ReplaceAllString(msg, "unknown argument(s) $1")
		msg += " (allowed: " + strings.Join(propertyNames(s), ", ") + ")"
	}
	msg = reType.ReplaceAllString(msg, "must be of type $2, not $1")
	msg = reEnum.ReplaceAllString(msg, "must be one of [$2], not $1")
	return truncate(msg, 500)
}

// propertyNames returns the schema's property names in declaration order.
func propertyNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) > 0 {
		return s.PropertyOrder
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	return names
}

// Canonical returns the canonical form of a JSON value: object keys sorted at every level,
// numbers exactly as written, no insignificant whitespace, no HTML escaping. Two documents
// that differ only in key order or whitespace have the same canonical form. Invalid JSON
// (including trailing data) is an error.
func Canonical(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("canonical json: trailing data after the value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// CanonicalArgs is the canonical JSON of a call's arguments, the form ArgsHash hashes and an
// exact standing rule compares: empty args are {}, like a call without arguments runs.
func CanonicalArgs(args json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return Canonical(args)
}

// ArgsHash returns the hex SHA-256 of the tool name, a NUL byte and the canonical JSON of
// args (CanonicalArgs): the hash an approval is bound to. Invalid JSON is an error.
func ArgsHash(name string, args json.RawMessage) (string, error) {
	c, err := CanonicalArgs(args)
	if err != nil {
		return "", fmt.Errorf("args hash of %s: %w", name, err)
	}
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(c)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// truncate shortens s to at most n runes, marking a cut with an ellipsis.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…"
		}
		i++
	}
	return s
}
