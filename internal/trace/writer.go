package trace

import (
	"bytes"
	"encoding/json"
	"io"
)

// RedactWriter returns a writer that passes each write to w with secrets redacted (Redact).
// The process logger writes through it, so every log line is covered — request logs,
// panics, background workers — whatever a call site forgot. A
// zerolog hook would not do: hooks see the message, not the fields already encoded.
//
// zerolog writes one JSON object per Write. Its string values are redacted one by one and
// the object re-encoded in its own key order, so the line stays valid JSON whatever a
// replacement touches (a raw byte rewrite could cut through an escape sequence). Writes that
// are not JSON are redacted as text.
func RedactWriter(w io.Writer) io.Writer { return redactWriter{w} }

type redactWriter struct{ w io.Writer }

func (r redactWriter) Write(p []byte) (int, error) {
	if !mayHoldSecret(string(p)) {
		return r.w.Write(p)
	}
	out, err := redactJSON(p)
	if err != nil {
		out = []byte(Redact(string(p)))
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redactJSON re-encodes the JSON values in p with every string redacted, keeping the order
// of keys and the trailing newline.
func redactJSON(p []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var out bytes.Buffer
	for dec.More() {
		if err := redactValue(dec, &out); err != nil {
			return nil, err
		}
		out.WriteByte('\n')
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if !bytes.HasSuffix(p, []byte("\n")) {
		out.Truncate(max(out.Len()-1, 0))
	}
	return out.Bytes(), nil
}

func redactValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closer := byte('}')
		if t == '[' {
			closer = ']'
		}
		out.WriteByte(byte(t))
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if closer == '}' {
				if err := redactValue(dec, out); err != nil { // the key
					return err
				}
				out.WriteByte(':')
			}
			if err := redactValue(dec, out); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
		out.WriteByte(closer)
		return nil
	case string:
		t = Redact(t)
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		out.Write(b)
		return nil
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		out.Write(b)
		return nil
	}
}
