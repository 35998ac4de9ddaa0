// Package doctools is the documents' toolset: list_documents, read_document,
// search_documents and save_document over internal/document's service (through the
// Documents port, docs/ARCHITECTURE.md §1).
package doctools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Documents is the owner's documents as the document tools need them (internal/document's
// Service implements it; each call opens a short owner transaction of its own, outside the
// turn's).
type Documents interface {
	// List lists the owner's documents, newest first.
	List(ctx context.Context, ownerID uuid.UUID) ([]steward.Document, error)
	// Read returns a page of a document's text; ErrNotFound for an unknown document.
	Read(ctx context.Context, ownerID, id uuid.UUID, offset, maxChars int) (steward.DocumentText, error)
	// SavePage stores a fetched page's text as a document.
	SavePage(ctx context.Context, ownerID uuid.UUID, p steward.SavedPage) (steward.Document, error)
	// Search returns up to max pieces of the owner's documents nearest in meaning to query,
	// nearest first; a bad query or max is a *steward.Error with CodeInvalid.
	Search(ctx context.Context, ownerID uuid.UUID, query string, max int) ([]steward.DocumentHit, error)
}

// Fetcher reads a URL for save_document (internal/web's egress-guarded fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, url string) (steward.WebPage, error)
}

// Tools returns list_documents, read_document and search_documents (reads) and save_document (a write
// that fetches through f, the egress-guarded web fetcher, and so is External: asked every
// time, never on an "always" rule). Document text is tool output: it reaches the model only
// inside a data block (docs/ARCHITECTURE.md §3).
func Tools(d Documents, f Fetcher) []tools.Tool {
	save := saveDocumentTool(d, f)
	save.External, save.Untrusted = true, true
	// Its fetch has happened once it ran, but what stays is a row: an undo deletes it.
	save.Reversible = true
	// A document's text is outside content: reading or finding it taints the turn.
	read, search := readDocumentTool(d), searchDocumentsTool(d)
	read.Untrusted, search.Untrusted = true, true
	return []tools.Tool{listDocumentsTool(d), read, search, save}
}

type listDocumentsArgs struct{}

func listDocumentsTool(d Documents) tools.Tool {
	return tools.Say(tools.New("list_documents",
		"List the owner's stored documents (id, name, type, size, text length), newest first.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, _ listDocumentsArgs) (any, error) {
			docs, err := d.List(ctx, env.OwnerID)
			if err != nil {
				return nil, fmt.Errorf("list documents: %w", err)
			}
			if docs == nil {
				docs = []steward.Document{}
			}
			return map[string]any{"documents": docs}, nil
		}), sayListDocuments, saidListDocuments)
}

// readDocumentArgs are the arguments of read_document.
type readDocumentArgs struct {
	ID       string `json:"id" jsonschema:"id (UUID) of the document, as returned by list_documents"`
	Offset   int    `json:"offset,omitempty" jsonschema:"the character to start at (default 0; next_offset of the previous read)"`
	MaxChars int    `json:"max_chars,omitempty" jsonschema:"the most characters to return (default 20000, at most 100000)"`

	id uuid.UUID
}

// Check parses the id and bounds offset and max_chars.
func (a *readDocumentArgs) Check() (err error) {
	if a.id, err = tools.ParseID("id", a.ID); err != nil {
		return err
	}
	if a.Offset < 0 {
		return &tools.ArgError{Field: "offset", Msg: "must not be negative"}
	}
	if err := tools.OrDefaultIn("max_chars", &a.MaxChars, tools.DefaultMaxChars, tools.MaxMaxChars); err != nil {
		return err
	}
	return nil
}

func readDocumentTool(d Documents) tools.Tool {
	return tools.Say(tools.New("read_document",
		"Read a stored document's extracted text from offset, at most max_chars characters (default 20000); "+
			"next_offset says where the rest starts.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a readDocumentArgs) (any, error) {
			page, err := d.Read(ctx, env.OwnerID, a.id, a.Offset, a.MaxChars)
			if errors.Is(err, steward.ErrNotFound) {
				return nil, &tools.ArgError{Field: "id", Msg: "no document with id " + a.id.String() + "; use list_documents to find it", Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("read document %s: %w", a.id, err)
			}
			return page, nil
		}), sayReadDocument, saidReadDocument)
}

// Bounds of search_documents.
const (
	DefaultDocumentResults = 5
	MaxDocumentResults     = 20
	maxDocumentQuery       = 500
)

// searchDocumentsArgs are the arguments of search_documents.
type searchDocumentsArgs struct {
	Query      string `json:"query" jsonschema:"what to look for, in words; passages are found by meaning"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"the most passages to return (default 5, at most 20)"`
}

// Check trims the query and bounds max_results.
func (a *searchDocumentsArgs) Check() error {
	a.Query = strings.TrimSpace(a.Query)
	if err := tools.CheckLength("query", a.Query, 1, maxDocumentQuery); err != nil {
		return err
	}
	if err := tools.OrDefaultIn("max_results", &a.MaxResults, DefaultDocumentResults, MaxDocumentResults); err != nil {
		return err
	}
	return nil
}

func searchDocumentsTool(d Documents) tools.Tool {
	return tools.Say(tools.New("search_documents",
		"Search the owner's stored documents by meaning: the passages nearest to query, each with its document's id "+
			"and name and the page or sheet it is on.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a searchDocumentsArgs) (any, error) {
			hits, err := d.Search(ctx, env.OwnerID, a.Query, a.MaxResults)
			var se *steward.Error
			if errors.As(err, &se) && se.Code == steward.CodeInvalid {
				return nil, &tools.ArgError{Field: "query", Msg: se.Message, Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("search documents: %w", err)
			}
			if hits == nil {
				hits = []steward.DocumentHit{}
			}
			return map[string]any{"results": hits}, nil
		}), saySearchDocuments, saidSearchDocuments)
}

// saveDocumentArgs are the arguments of save_document.
type saveDocumentArgs struct {
	URL  string `json:"url" jsonschema:"the http or https URL of the page or PDF to save"`
	Name string `json:"name,omitempty" jsonschema:"the document's name (default: the URL's last path segment)"`
}

// Check trims the URL and the name.
func (a *saveDocumentArgs) Check() error {
	a.URL, a.Name = strings.TrimSpace(a.URL), strings.TrimSpace(a.Name)
	if err := tools.CheckLength("url", a.URL, 1, 4096); err != nil {
		return err
	}
	return tools.CheckLength("name", a.Name, 0, 255)
}

func saveDocumentTool(d Documents, f Fetcher) tools.Tool {
	return tools.Say(tools.New("save_document",
		"Fetch a web page or PDF by URL and store its text as one of the owner's documents (asks the owner first).",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a saveDocumentArgs) (any, error) {
			if f == nil {
				return nil, errors.New("save_document has no fetcher")
			}
			p, err := f.Fetch(ctx, a.URL)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, &tools.ArgError{Field: "url", Msg: err.Error(), Err: err}
			}
			name := a.Name
			if name == "" {
				name = p.Title
			}
			doc, err := d.SavePage(ctx, env.OwnerID, steward.SavedPage{Name: name, URL: p.URL, ContentType: p.ContentType, Text: p.Text, TurnID: env.TurnID})
			var se *steward.Error
			if errors.As(err, &se) && se.Code != steward.CodeInternal {
				return nil, &tools.ArgError{Field: "url", Msg: se.Message, Err: err}
			}
			if err != nil {
				return nil, fmt.Errorf("save document: %w", err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoDeleteDocument, ID: doc.ID})
			return map[string]any{"document": doc}, nil
		}), saySaveDocument, saidSaveDocument)
}

func sayListDocuments(listDocumentsArgs) string { return "List documents" }

func saidListDocuments(_ listDocumentsArgs, o struct {
	Documents []json.RawMessage `json:"documents"`
}) string {
	return "Found " + tools.Count(len(o.Documents), "document")
}

func sayReadDocument(readDocumentArgs) string { return "Read a stored document" }

func saidReadDocument(_ readDocumentArgs, o struct {
	Document struct {
		Name string `json:"name"`
	} `json:"document"`
}) string {
	return "Read " + tools.Quote(o.Document.Name)
}

func saySearchDocuments(a searchDocumentsArgs) string {
	return "Search documents for " + tools.Quote(a.Query)
}

func saidSearchDocuments(_ searchDocumentsArgs, o struct {
	Results []json.RawMessage `json:"results"`
}) string {
	return "Found " + tools.Count(len(o.Results), "passage")
}

func saySaveDocument(a saveDocumentArgs) string {
	s := "Save " + tools.Site(a.URL) + " as a document"
	if n := strings.TrimSpace(a.Name); n != "" {
		s += " named " + tools.Quote(n)
	}
	return s
}

func saidSaveDocument(_ saveDocumentArgs, o struct {
	Document struct {
		Name string `json:"name"`
	} `json:"document"`
}) string {
	return "Saved " + tools.Quote(o.Document.Name)
}
