package tools_test

import (
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/tools"
)

// TestLinks: every form a chat client links is found, trimmed of the prose around it, and
// plain prose is not.
func TestLinks(t *testing.T) {
	for text, want := range map[string][]string{
		"See https://evil.example/x?d=4417.":            {"https://evil.example/x?d=4417"},
		"read (www.evil.example) now":                   {"www.evil.example"},
		"go to evil.example/c?d=secret, then":           {"evil.example/c?d=secret"},
		"from School <office@school.example>":           nil,
		"[click](https://evil.example)":                 {"click](https://evil.example"},
		"mailto:a@evil.example":                         {"mailto:a@evil.example"},
		"Meeting at 10:30, e.g. in room 3.5; i.e. ok.":  nil,
		"Morning briefing: 3 new mails, nothing urgent": nil,
	} {
		if got := tools.Links(text); !slices.Equal(got, want) {
			t.Errorf("Links(%q) = %q, want %q", text, got, want)
		}
	}
}
