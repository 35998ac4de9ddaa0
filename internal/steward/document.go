package steward

import (
	"time"

	"github.com/google/uuid"
)

// Document is a stored document's metadata, as the owner and the document tools see it.
type Document struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size_bytes"`
	Source      string    `json:"source"`     // "upload" or "tool"
	TextChars   int64     `json:"text_chars"` // the length of the extracted text, in characters
	CreatedAt   time.Time `json:"created_at"`
}

// DocumentText is a page of a document's extracted text: Text starts at character Offset;
// NextOffset is where the next page starts, 0 when Text reaches the end.
type DocumentText struct {
	Document   Document `json:"document"`
	Offset     int      `json:"offset"`
	Text       string   `json:"text"`
	NextOffset int      `json:"next_offset,omitempty"`
}

// SavedPage is a page the save_document tool fetched, to store as a document: its text,
// already extracted, from URL.
type SavedPage struct {
	Name, URL, ContentType, Text string
	TurnID                       uuid.UUID
}

// DocumentHit is a piece of a document's text that search_documents found by meaning: the
// document, the section it is in ("page 3", "sheet Budget"; "" for a document of one
// section) and the text.
type DocumentHit struct {
	DocumentID uuid.UUID `json:"document_id"`
	Name       string    `json:"name"`
	Section    string    `json:"section,omitempty"`
	Text       string    `json:"text"`
}
