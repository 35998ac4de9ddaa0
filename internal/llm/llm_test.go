package llm

import (
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

// TestMessageText: Text is what the author wrote — no thoughts, no context parts (the recalled
// memory block), even when the context quotes something the owner once said.
func TestMessageText(t *testing.T) {
	t.Parallel()
	m := steward.Message{Role: steward.RoleUser, Parts: []steward.Part{
		{Text: "<data source=\"memory\">\nOwner: what time is it\n</data>", Context: true},
		{Text: "remind me to "},
		{Text: "hidden reasoning", Thought: true},
		{Text: "call the dentist"},
	}}
	if got := m.Text(); got != "remind me to call the dentist" {
		t.Errorf("Text() = %q, want only the author's words", got)
	}
	if got := (Response{Message: m}).Text(); got != "remind me to call the dentist" {
		t.Errorf("Response.Text() = %q", got)
	}
}
