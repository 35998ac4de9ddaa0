package steward

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// The rows a turn's start reads in its own transaction for memory recall and the owner's
// MCP tools (docs/ARCHITECTURE.md §2): internal/store reads them (store.MemoryChunk, … are
// these types), internal/memory and internal/mcpclient make them into a memory block and
// tools.

// MemoryFact is a structured fact with its provenance.
type MemoryFact struct {
	ID           uuid.UUID
	Kind         string
	Subject      string
	Content      string
	Source       string // a store.FactSource* constant
	Origin       string // who wrote it: store.OriginOwner, or store.OriginTool for a fact stored by a tainted turn
	TurnID       *uuid.UUID
	CreatedAt    time.Time
	UpdatedAt    time.Time
	SupersededAt *time.Time
}

// MemoryChunk is a remembered text found by meaning.
type MemoryChunk struct {
	ID         uuid.UUID
	SourceKind string // conversation | fact | summary | document
	SourceID   string
	Text       string
	CreatedAt  time.Time
	Origin     string  // a store.Origin* constant
	Distance   float64 // cosine distance to the query, in searches
}

// MCPServer is a registered remote MCP server of the owner.
type MCPServer struct {
	Name       string
	URL        string
	Headers    map[string]string // secret values: the faces show only the names
	CreatedAt  time.Time
	ApprovedAt time.Time
}

// MCPTool is a tool the owner approved, as it was when approved.
type MCPTool struct {
	Server        string
	Name          string
	Hash          string // SHA-256 of name, description and input schema at approval
	Description   string
	InputSchema   json.RawMessage
	ReadOnly      bool // the server's readOnlyHint at approval
	WriteOverride bool // the owner treats it as a write anyway
	Enabled       bool
	ChangedAt     *time.Time // set when the server presented a different hash: disabled until re-approved
}
