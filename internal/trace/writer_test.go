package trace_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/trace"
)

// TestRedactWriterKeepsJSONValid: every field of a log line is redacted, whatever its shape,
// and the line stays one valid JSON object in its key order.
func TestRedactWriterKeepsJSONValid(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(trace.RedactWriter(&buf))
	log.Error().Str("panic", `token="abcdefgh\"`).Strs("urls", []string{"postgres://u:pw1234@db/x"}).
		Interface("nested", map[string]any{"auth": "Bearer abcdefghijklmnop", "n": 3}).Msg("password=hunter2")
	line := buf.String()
	if !json.Valid([]byte(line)) || !strings.HasSuffix(line, "}\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("not one JSON line: %q", line)
	}
	for _, secret := range []string{"abcdefgh", "pw1234", "abcdefghijklmnop", "hunter2"} {
		if strings.Contains(line, secret) {
			t.Errorf("%q leaked: %s", secret, line)
		}
	}
	if !strings.HasPrefix(line, `{"level":"error","panic":`) || !strings.Contains(line, `"n":3`) {
		t.Errorf("fields reordered or changed: %s", line)
	}
	buf.Reset()
	if _, err := trace.RedactWriter(&buf).Write([]byte("plain text api_key=abcdef123\n")); err != nil || buf.String() != "plain text api_key=[REDACTED]\n" {
		t.Errorf("text line = %q, %v", buf.String(), err)
	}
}
