package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/db"
)

// Documents: the owner's uploaded and saved documents; their chunks are memory
// chunks of source_kind "document".

// Document sources: who stored a document.
const (
	DocumentSourceUpload = "upload" // the owner, through POST /v1/documents
	DocumentSourceTool   = "tool"   // save_document, approved in a turn
)

// Document is a stored document's metadata.
type Document struct {
	ID          uuid.UUID
	Name        string
	ContentType string
	Size        int64
	SHA256      string
	Source      string // a DocumentSource* constant
	TurnID      *uuid.UUID
	TextChars   int64 // the length of the extracted text, in characters
	CreatedAt   time.Time
}

// NewDocument is a document to store: its original bytes are Content, or (ContentKey set,
// Content nil) an object of Size bytes in the document bucket (migration 00020).
type NewDocument struct {
	ID                        uuid.UUID // zero: a new random id
	Name, ContentType, SHA256 string
	Content                   []byte
	ContentKey                *string
	Size                      int64 // with ContentKey; otherwise len(Content)
	Text                      string
	Source                    string // a DocumentSource* constant
	TurnID                    *uuid.UUID
}

// Create stores a document.
func (t Documents) Create(ctx context.Context, d NewDocument) (Document, error) {
	if d.ID == uuid.Nil {
		d.ID = uuid.New()
	}
	size := int64(len(d.Content))
	if d.ContentKey != nil {
		size = d.Size
	} else if d.Content == nil {
		d.Content = []byte{}
	}
	r, err := t.q.CreateDocument(ctx, db.CreateDocumentParams{ID: d.ID, OwnerID: t.ownerID, Name: d.Name, ContentType: d.ContentType,
		SizeBytes: size, Sha256: d.SHA256, Content: d.Content, ContentKey: d.ContentKey, Text: d.Text, Source: d.Source, TurnID: nullUUID(d.TurnID)})
	if err != nil {
		return Document{}, notFound("store document", err)
	}
	return Document{ID: r.ID, Name: r.Name, ContentType: r.ContentType, Size: r.SizeBytes, SHA256: r.Sha256, Source: r.Source,
		TurnID: ptrUUID(r.TurnID), TextChars: r.TextChars, CreatedAt: r.CreatedAt}, nil
}

// List lists the owner's documents, newest first.
func (t Documents) List(ctx context.Context, limit int) ([]Document, error) {
	rows, err := t.q.ListDocuments(ctx, db.ListDocumentsParams{OwnerID: t.ownerID, MaxRows: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	out := make([]Document, len(rows))
	for i, r := range rows {
		out[i] = Document{ID: r.ID, Name: r.Name, ContentType: r.ContentType, Size: r.SizeBytes, SHA256: r.Sha256, Source: r.Source,
			TurnID: ptrUUID(r.TurnID), TextChars: r.TextChars, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// Get returns a document's metadata and up to maxChars characters of its text from offset
// (in characters).
func (t Documents) Get(ctx context.Context, id uuid.UUID, offset, maxChars int) (Document, string, error) {
	r, err := t.q.GetDocument(ctx, db.GetDocumentParams{OwnerID: t.ownerID, ID: id, OffsetChars: int32(offset), MaxChars: int32(maxChars)})
	if err != nil {
		return Document{}, "", notFound("get document", err)
	}
	return Document{ID: r.ID, Name: r.Name, ContentType: r.ContentType, Size: r.SizeBytes, SHA256: r.Sha256, Source: r.Source,
		TurnID: ptrUUID(r.TurnID), TextChars: r.TextChars, CreatedAt: r.CreatedAt}, r.TextPart, nil
}

// Content returns a document's name, content type and either its original bytes or the
// key of the object in the document bucket that holds them (then content is nil).
func (t Documents) Content(ctx context.Context, id uuid.UUID) (name, contentType string, content []byte, key string, err error) {
	r, err := t.q.DocumentContent(ctx, db.DocumentContentParams{OwnerID: t.ownerID, ID: id})
	if err != nil {
		return "", "", nil, "", notFound("document content", err)
	}
	if r.ContentKey != nil {
		return r.Name, r.ContentType, nil, *r.ContentKey, nil
	}
	return r.Name, r.ContentType, r.Content, "", nil
}

// Delete deletes a document and takes its chunks out of recall.
func (t Documents) Delete(ctx context.Context, id uuid.UUID) error {
	n, err := t.q.DeleteDocument(ctx, db.DeleteDocumentParams{OwnerID: t.ownerID, ID: id})
	if err := rowsOrNotFound("delete document", n, err); err != nil {
		return err
	}
	if err := t.q.SupersedeDocumentChunks(ctx, db.SupersedeDocumentChunksParams{OwnerID: t.ownerID, DocumentID: id.String()}); err != nil {
		return fmt.Errorf("delete document chunks: %w", err)
	}
	return nil
}
