package steward

import (
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"
)

// Task statuses.
const (
	TaskOpen = "open"
	TaskDone = "done"
)

// Fact kinds. An empty kind means FactKindFact.
const (
	FactKindFact       = "fact"
	FactKindPerson     = "person"
	FactKindProject    = "project"
	FactKindPreference = "preference"
	FactKindDecision   = "decision"
)

// Task is one of the owner's tasks.
type Task struct {
	ID          uuid.UUID  `json:"id"`
	Title       string     `json:"title"`
	Notes       string     `json:"notes,omitempty"`
	Due         *time.Time `json:"due,omitempty"`
	Status      string     `json:"status"` // TaskOpen or TaskDone
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

// NewTask is a task to create.
type NewTask struct {
	Title, Notes string
	Due          *time.Time
}

// Fact is one remembered piece of structured memory.
type Fact struct {
	ID        uuid.UUID `json:"id"`
	Kind      string    `json:"kind"`
	Subject   string    `json:"subject,omitempty"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// Untrusted says a turn that had read outside content stored it: its words may be an
	// attacker's, not the owner's (docs/ARCHITECTURE.md §3).
	Untrusted bool `json:"untrusted,omitempty"`
}

// NewFact is a fact to remember. Key (see FactKey) deduplicates: a fact with the same key is
// not stored twice. TurnID is the turn that learned it, if any; Untrusted says that turn was
// tainted (Fact.Untrusted).
type NewFact struct {
	Kind, Subject, Content, Key string
	TurnID                      *uuid.UUID
	Untrusted                   bool
}

// Notification is a message for the owner: stored and listed, and delivered to the owner's
// channel when one is set (internal/delivery).
type Notification struct {
	ID        uuid.UUID `json:"id"`
	Channel   string    `json:"channel,omitempty"`
	Title     string    `json:"title,omitempty"`
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}

// FactKey returns the deduplication key of a fact: "kind:subject:content", each part
// normalised (Unicode NFKC, lower case, runs of white space collapsed to one space, trailing
// punctuation and space trimmed; an empty kind is "fact"). Backslashes and colons inside a
// part are escaped with a backslash so that different facts never share a key.
func FactKey(kind, subject, content string) string {
	k := normalizeKeyPart(kind)
	if k == "" {
		k = FactKindFact
	}
	return k + ":" + normalizeKeyPart(subject) + ":" + normalizeKeyPart(content)
}

// keyEscaper escapes the separator of FactKey inside a part.
var keyEscaper = strings.NewReplacer(`\`, `\\`, `:`, `\:`)

// normalizeKeyPart normalises one part of a fact key.
func normalizeKeyPart(s string) string {
	s = strings.ToLower(norm.NFKC.String(s))
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
	return keyEscaper.Replace(s)
}

// ToolKind says whether a tool only reads or changes the world.
type ToolKind string

// Tool kinds. Write tools pass the safety gate before they run.
const (
	KindRead  ToolKind = "read"
	KindWrite ToolKind = "write"
)
