package steward_test

import (
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

func TestFactKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind, subject, content, want string
	}{
		{"fact", "", "Likes tea", "fact::likes tea"},
		{"", "", "Likes tea", "fact::likes tea"},
		{"Preference", " Ann ", "  Likes   GREEN\ttea.  ", "preference:ann:likes green tea"},
		{"fact", "", "Is it done?!", "fact::is it done"},
		{"fact", "", "ﬁne Ｔｅａ", "fact::fine tea"}, // NFKC: ligature and full-width letters
		{"fact", "", "café", "fact::café"},
		{"fact", "", "cafe\u0301", "fact::café"}, // composed by NFKC
		{"fact", "a:b", "c", `fact:a\:b:c`},
		{"fact", "a", "b:c", `fact:a:b\:c`},
		{"fact", `a\b`, "c", `fact:a\\b:c`},
	}
	for _, tc := range tests {
		if got := steward.FactKey(tc.kind, tc.subject, tc.content); got != tc.want {
			t.Errorf("FactKey(%q, %q, %q) = %q, want %q", tc.kind, tc.subject, tc.content, got, tc.want)
		}
	}
}
