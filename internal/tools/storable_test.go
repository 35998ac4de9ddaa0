package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/tools"
)

// TestCheckStorable: what Postgres cannot store is refused with the argument's name, what it
// can is not (an escaped backslash before "u0000", a surrogate pair), and Scrub makes every
// refused text storable.
func TestCheckStorable(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		`{"title":"milk\u0000"}`:                  "argument title contains a NUL byte",
		`{"a":1,"items":[{"n":"\u0000"}]}`:        "argument items contains a NUL byte",
		`{"x\u0000":1}`:                           `the name of argument "x\x00" contains a NUL byte`,
		`{"x\ud800":1}`:                           "an argument's name contains an unpaired surrogate escape (\\ud800)",
		`{"t":"a\udc00b"}`:                        "argument t contains an unpaired surrogate escape (\\udc00)",
		`{"t":"a\ud800\u0041"}`:                   "argument t contains an unpaired surrogate escape (\\ud800)",
		`{"t":"a\ud800"}`:                         "argument t contains an unpaired surrogate escape (\\ud800)",
		"{\"t\":\"a\xffb\"}":                      "argument t is not valid UTF-8",
		"{\"t\":\"a\x00b\"}":                      "the arguments' text contains a NUL byte",
		`["\u0000"]`:                              "the arguments' text contains a NUL byte",
		`{"t":"a\\u0000"}`:                        "",
		`{"t":"\\\u0041 \ud83d\ude00 \u00e9 \\"}`: "",
		`{"t":"\ud83d\ude00"}`:                    "",
		`{}`:                                      "",
	} {
		e := tools.CheckStorable(json.RawMessage(args))
		switch {
		case want == "" && e != nil:
			t.Errorf("%s refused: %v", args, e)
		case want != "" && (e == nil || !strings.Contains(e.Error(), want)):
			t.Errorf("%s: %v, want %q", args, e, want)
		case e != nil:
			if s := tools.Scrub(json.RawMessage(args)); tools.CheckStorable(s) != nil || !json.Valid(s) {
				t.Errorf("Scrub(%s) = %s, still refused", args, s)
			}
		}
	}
}

// TestStorable: a result Postgres stores is kept byte for byte; one it refuses is repaired
// with U+FFFD, whatever JSON value it is (an object, an error's string).
func TestStorable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"subject":"Invoice\u0000now","n":1}`: `{"n":1,"subject":"Invoice` + "\uFFFD" + `now"}`,
		`"the server said \u0000"`:             `"the server said ` + "\uFFFD" + `"`,
		"{\"t\":\"a\xffb\"}":                   `{"t":"a` + "\uFFFD" + `b"}`,
		`{"t":"a\\u0000","b":"<"}`:             `{"t":"a\\u0000","b":"<"}`,
	} {
		if got := string(tools.Storable(json.RawMessage(in))); got != want {
			t.Errorf("Storable(%s) = %s, want %s", in, got, want)
		}
	}
}
