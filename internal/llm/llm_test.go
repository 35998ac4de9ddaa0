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

// TestAttemptClass sorts a chain's failed attempts for the story.
func TestAttemptClass(t *testing.T) {
	for _, c := range []struct {
		a    Attempt
		want string
	}{
		{Attempt{Error: "circuit open", Skipped: true}, ClassCircuitOpen},
		{Attempt{Error: "Error 429, Message: quota, Status: RESOURCE_EXHAUSTED"}, ClassRateLimited},
		{Attempt{Error: "openai: chat completion: context deadline exceeded"}, ClassTimeout},
		{Attempt{Error: "Error 503, Message: The model is overloaded., Status: UNAVAILABLE"}, ClassServer},
		{Attempt{Error: "dial tcp 127.0.0.1:1: connect: connection refused"}, ClassUnreachable},
	} {
		if got := c.a.Class(); got != c.want {
			t.Errorf("Class(%q) = %s, want %s", c.a.Error, got, c.want)
		}
	}
}
