// Package document is the owner's documents (docs/ARCHITECTURE.md §7): upload, list, read,
// delete, search and the pages save_document stores. Reading a document's text is
// internal/doctext's, in its sandboxed child (§3).
package document

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // picture reads the headers of GIF, JPEG and PNG pictures
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/audio"
	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Paging of a document's text (GET /v1/documents/{id}, read_document).
const (
	DefaultPageChars = 20000
	MaxPageChars     = 100000
	// ListLimit is how many documents List returns at most, newest first.
	ListLimit = 200
	// DefaultMaxBytes caps a document when Service.MaxBytes is zero
	// (STEWARD_MAX_DOCUMENT_BYTES's default).
	DefaultMaxBytes = 20 << 20
	maxNameChars    = 255
)

// Service is the owner's documents (docs/ARCHITECTURE.md §7): upload, list, read a page of
// the text, delete, and store a page save_document fetched. Each method opens the owner
// transaction and returns domain types or *steward.Errors.
type Service struct {
	Store *store.Store
	// MaxBytes caps an uploaded document and a saved page's text
	// (STEWARD_MAX_DOCUMENT_BYTES); zero means DefaultMaxBytes.
	MaxBytes int64
	// Embedder embeds the chunks of a new document's text and search queries (the memory
	// service's embedder); nil means documents are stored unsearched.
	Embedder Embedder
	// Objects keeps new documents' original bytes (the S3 bucket STEWARD_DOCUMENT_BUCKET
	// names, internal/awsapi); nil keeps them in PostgreSQL.
	Objects Objects
	// Logger logs what fails after the answer is decided (an orphan object's delete).
	Logger zerolog.Logger
	// Readers bounds the uploads read at once; nil means the process's (doctext.ProcessReaders).
	Readers *doctext.Readers
	// Transcribe turns an uploaded recording (its bytes sniffed as audio, internal/audio)
	// into the document's text: the voice service's Transcribe (§18), priced and budgeted as
	// every voice call. Nil refuses recordings like any type Steward does not read.
	Transcribe func(ctx context.Context, ownerID uuid.UUID, recording []byte, declaredType string) (string, error)
}

// Objects is where the original bytes of documents go when not in PostgreSQL: an object
// store under owner_id/document_id keys. Get of a missing key is an error.
type Objects interface {
	Put(ctx context.Context, key, contentType string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
}

// File is a document's original bytes, as uploaded or saved, for a download.
type File struct {
	Name, ContentType string
	Data              []byte
}

// Limit is the largest document Upload takes, in bytes.
func (s *Service) Limit() int64 { return s.maxBytes() }

func (s *Service) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

// Upload extracts the text of an uploaded document and stores it with its chunks, embedded
// for search and recall (search.go). A document over MaxBytes
// is too_large, a bad name or a document Extract refuses is invalid (with Extract's reason);
// nothing is stored then.
func (s *Service) Upload(ctx context.Context, ownerID uuid.UUID, name, contentType string, data []byte) (steward.Document, error) {
	return s.upload(ctx, ownerID, name, contentType, doctext.Source{Data: data})
}

// UploadFile is Upload of a body spooled to a file (upload.Spool, size bytes): the reader
// reads it from the file, so while it waits for a reading slot no buffer of its size is
// held; its bytes are read into memory only to be stored.
func (s *Service) UploadFile(ctx context.Context, ownerID uuid.UUID, name, contentType string, f io.ReaderAt, size int64) (steward.Document, error) {
	return s.upload(ctx, ownerID, name, contentType, doctext.Source{File: f, Size: size})
}

func (s *Service) upload(ctx context.Context, ownerID uuid.UUID, name, contentType string, body doctext.Source) (steward.Document, error) {
	name, err := checkName(name)
	if err != nil {
		return steward.Document{}, err
	}
	if body.Len() > s.maxBytes() {
		return steward.Document{}, steward.Errorf(steward.CodeTooLarge, "the document is larger than %d bytes", s.maxBytes())
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(body.Reader(), head)
	head = head[:n]
	if kind := audio.Kind(head); kind != "" && s.Transcribe != nil {
		data, err := bytesOf(body)
		if err != nil {
			return steward.Document{}, err
		}
		return s.uploadRecording(ctx, ownerID, name, kind, contentType, data)
	}
	if kind, text, ok := picture(name, head, body.Reader()); ok {
		return s.store(ctx, ownerID, store.NewDocument{Name: name, ContentType: kind, Text: text, Source: store.DocumentSourceUpload},
			[]doctext.Section{{Text: text}}, body)
	}
	readers := s.Readers
	if readers == nil {
		readers = doctext.ProcessReaders
	}
	body.Name, body.ContentType, body.Owner = name, contentType, ownerID.String()
	ex, err := readers.Extract(ctx, body)
	if err != nil {
		return steward.Document{}, err
	}
	return s.store(ctx, ownerID, store.NewDocument{Name: name, ContentType: ex.ContentType, Text: ex.Text(), Source: store.DocumentSourceUpload},
		ex.Sections, body)
}

// store embeds an upload's sections, then reads its bytes (only now: an upload spooled to a
// file is in memory just while it is stored) and creates the document.
func (s *Service) store(ctx context.Context, ownerID uuid.UUID, d store.NewDocument, sections []doctext.Section, body doctext.Source) (steward.Document, error) {
	chunks, err := s.embedChunks(ctx, d.Name, sections)
	if err != nil {
		return steward.Document{}, err
	}
	if d.Content, err = bytesOf(body); err != nil {
		return steward.Document{}, err
	}
	return s.create(ctx, ownerID, d, chunks)
}

// bytesOf is an upload's bytes.
func bytesOf(body doctext.Source) ([]byte, error) {
	if body.File == nil {
		return body.Data, nil
	}
	data := make([]byte, body.Size)
	if _, err := body.File.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the spooled upload: %w", err)
	}
	return data, nil
}

// uploadRecording stores a recording as a document whose text is its transcript: searchable
// and recalled by what was said, its bytes kept (POST /v1/chat's audio_document_id reads them).
func (s *Service) uploadRecording(ctx context.Context, ownerID uuid.UUID, name, kind, declared string, data []byte) (steward.Document, error) {
	text, err := s.Transcribe(ctx, ownerID, data, declared)
	if err != nil {
		return steward.Document{}, err
	}
	return s.store(ctx, ownerID, store.NewDocument{Name: name, ContentType: kind, Text: text, Source: store.DocumentSourceUpload},
		[]doctext.Section{{Text: text}}, doctext.Source{Data: data})
}

// picture reports whether an upload is a JPEG, PNG or GIF picture (a photo sent to the
// Telegram bot, a scan uploaded in the web app) by its first bytes (head) and its header
// (read from r), with its type and the text it is stored and found by: what it is, its size
// and its name. Only the header is read (image.DecodeConfig), never the pixels, so a hostile
// header costs nothing; SVG, which could carry script, is not a picture here (and every
// download is sandboxed, serve.go).
func picture(name string, head []byte, r io.Reader) (kind, text string, ok bool) {
	kind = http.DetectContentType(head)
	if kind != "image/jpeg" && kind != "image/png" && kind != "image/gif" {
		return "", "", false
	}
	cfg, format, err := image.DecodeConfig(r)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return "", "", false
	}
	return kind, fmt.Sprintf("A picture (%s, %d×%d pixels) named %s. Its content has not been read as text.",
		strings.ToUpper(format), cfg.Width, cfg.Height, name), true
}

// SavePage stores a page the save_document tool fetched (its text, already extracted) as a
// text/plain document; the name defaults to the URL's last path segment or its host.
func (s *Service) SavePage(ctx context.Context, ownerID uuid.UUID, p steward.SavedPage) (steward.Document, error) {
	name := strings.TrimSpace(p.Name)
	if name == "" {
		name = nameOfURL(p.URL)
	}
	name, err := checkName(name)
	if err != nil {
		return steward.Document{}, err
	}
	if int64(len(p.Text)) > s.maxBytes() {
		return steward.Document{}, steward.Errorf(steward.CodeTooLarge, "the page's text is larger than %d bytes", s.maxBytes())
	}
	if strings.TrimSpace(p.Text) == "" {
		return steward.Document{}, steward.Refusef(steward.CodeInvalid, doctext.ReasonEmpty, "the page has no text to save")
	}
	chunks, err := s.embedChunks(ctx, name, []doctext.Section{{Text: p.Text}})
	if err != nil {
		return steward.Document{}, err
	}
	turn := p.TurnID
	return s.create(ctx, ownerID, store.NewDocument{Name: name, ContentType: doctext.TypeText, Content: []byte(p.Text), Text: p.Text,
		Source: store.DocumentSourceTool, TurnID: &turn}, chunks)
}

// create stores a document and its chunks, embedded beforehand, in one transaction: a
// document is searchable from the moment it exists. With Objects the original bytes are put
// first, outside any transaction, under owner_id/document_id; the row then names the key,
// and when the transaction fails the object is deleted again (best effort, logged).
func (s *Service) create(ctx context.Context, ownerID uuid.UUID, d store.NewDocument, chunks []chunk) (steward.Document, error) {
	sum := sha256.Sum256(d.Content)
	d.SHA256 = hex.EncodeToString(sum[:])
	d.ID = uuid.New()
	key := ""
	if s.Objects != nil {
		key = objectKey(ownerID, d.ID)
		if err := s.Objects.Put(ctx, key, d.ContentType, d.Content); err != nil {
			return steward.Document{}, fmt.Errorf("store the document's bytes: %w", err)
		}
		d.ContentKey, d.Size, d.Content = &key, int64(len(d.Content)), nil
	}
	out, err := s.insert(ctx, ownerID, d, chunks)
	if err != nil && key != "" {
		if derr := s.Objects.Delete(context.WithoutCancel(ctx), key); derr != nil {
			s.Logger.Error().Err(derr).Str("key", key).Msg("document: could not delete the object of a document that was not stored")
		}
	}
	return out, err
}

func objectKey(ownerID, id uuid.UUID) string { return ownerID.String() + "/" + id.String() }

func (s *Service) insert(ctx context.Context, ownerID uuid.UUID, d store.NewDocument, chunks []chunk) (steward.Document, error) {
	var out steward.Document
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		doc, err := tx.Documents.Create(ctx, d)
		if err != nil {
			return err
		}
		for _, c := range chunks {
			if _, err := tx.Memory.AddChunk(ctx, SourceKind, doc.ID.String(), store.OriginDocument, c.text, c.vector); err != nil {
				return err
			}
		}
		out = domain(doc)
		return nil
	})
	return out, err
}

// List lists the owner's documents, newest first (at most ListLimit).
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]steward.Document, error) {
	var out []steward.Document
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		docs, err := tx.Documents.List(ctx, ListLimit)
		out = make([]steward.Document, len(docs))
		for i, d := range docs {
			out[i] = domain(d)
		}
		return err
	})
	return out, err
}

// Read returns a document's metadata and up to maxChars characters of its text from offset
// (characters; maxChars 0 means DefaultPageChars). Another owner's document, like an unknown
// one, is not_found.
func (s *Service) Read(ctx context.Context, ownerID, id uuid.UUID, offset, maxChars int) (steward.DocumentText, error) {
	if maxChars == 0 {
		maxChars = DefaultPageChars
	}
	if offset < 0 {
		return steward.DocumentText{}, steward.Errorf(steward.CodeInvalid, "offset must not be negative")
	}
	if maxChars < 1 || maxChars > MaxPageChars {
		return steward.DocumentText{}, steward.Errorf(steward.CodeInvalid, "max_chars must be from 1 to %d", MaxPageChars)
	}
	var out steward.DocumentText
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		doc, text, err := tx.Documents.Get(ctx, id, offset, maxChars)
		if err != nil {
			return err
		}
		out = steward.DocumentText{Document: domain(doc), Offset: offset, Text: text}
		if end := offset + utf8.RuneCountInString(text); int64(end) < doc.TextChars {
			out.NextOffset = end
		}
		return nil
	})
	return out, err
}

// Content returns a document's original bytes, from PostgreSQL or (read after the
// transaction) the object store. Another owner's document, like an unknown one, is not_found.
func (s *Service) Content(ctx context.Context, ownerID, id uuid.UUID) (File, error) {
	var f File
	var key string
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) (err error) {
		f.Name, f.ContentType, f.Data, key, err = tx.Documents.Content(ctx, id)
		return err
	})
	if err != nil || key == "" {
		return f, err
	}
	if s.Objects == nil {
		return File{}, fmt.Errorf("document %s is in the document bucket, and none is configured (STEWARD_DOCUMENT_BUCKET)", id)
	}
	if f.Data, err = s.Objects.Get(ctx, key); err != nil {
		return File{}, fmt.Errorf("read the document's bytes: %w", err)
	}
	return f, nil
}

// Delete deletes a document and takes its chunks out of recall; not_found when the owner
// has no such document. Its object, if any, is deleted after the commit (best effort,
// logged: an orphan object is reachable through no row).
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	var key string
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if s.Objects != nil {
			_, _, _, k, err := tx.Documents.Content(ctx, id)
			if err != nil {
				return err
			}
			key = k
		}
		return tx.Documents.Delete(ctx, id)
	})
	if err != nil || key == "" || s.Objects == nil {
		return err
	}
	if err := s.Objects.Delete(ctx, key); err != nil {
		s.Logger.Error().Err(err).Str("key", key).Msg("document: could not delete a deleted document's object")
	}
	return nil
}

func domain(d store.Document) steward.Document {
	return steward.Document{ID: d.ID, Name: d.Name, ContentType: d.ContentType, Size: d.Size, Source: d.Source,
		TextChars: d.TextChars, CreatedAt: d.CreatedAt}
}

// checkName trims a document's name and refuses an empty, over-long one or one with a control
// or invisible formatting character (steward.CheckName).
func checkName(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", steward.Errorf(steward.CodeInvalid, "a document needs a name (the name query parameter)")
	}
	return steward.CheckName("the document's name", name, maxNameChars)
}

// nameOfURL names a saved page after its URL's last path segment, else its host.
func nameOfURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base := path.Base(u.Path); base != "." && base != "/" && base != "" {
		return base
	}
	return u.Host
}
