// Package doctext reads a document's text, and nothing else (no database, no service: a leaf
// that internal/document's service and internal/web's fetcher both use; docs/ARCHITECTURE.md
// §1 and §3): Extract turns a document's bytes into text — github.com/ledongthuc/pdf for
// PDF, archive/zip and encoding/xml for DOCX and XLSX, encoding/csv, and codeberg.org/readeck/go-readability for HTML — and refuses
// encrypted, corrupt, decompression-bomb, oversized and unknown documents with a client error
// (invalid: 422) and a reason. Whatever it reads comes from strangers (an upload, a web page,
// later a mail attachment), so every reader is bounded in what it keeps (caps on text, pages,
// sheets, rows, columns, XML depth and elements, inflated bytes, each checked while
// streaming) and the whole reading runs in a child process bounded in memory, CPU and time
// (sandbox.go), a few at once per process.
package doctext

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
)

// Media types Extract reads.
const (
	TypePDF      = "application/pdf"
	TypeDOCX     = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	TypeXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	TypeCSV      = "text/csv"
	TypeText     = "text/plain"
	TypeMarkdown = "text/markdown"
	TypeHTML     = "text/html"
)

// Limits of extraction, whatever the upload cap.
const (
	// MaxUnzipped bounds the declared uncompressed size of a DOCX or XLSX archive, and
	// MaxStreamBytes the decompressed content streams of a PDF: a decompression bomb is
	// refused before it is inflated, and what inflates is counted as it streams.
	MaxUnzipped    = 64 << 20
	MaxStreamBytes = 32 << 20
	// MaxTextBytes bounds the extracted text.
	MaxTextBytes = 10 << 20
)

// Refusal reasons of Extract's errors (steward.Error.Reason, code invalid: 422).
const (
	ReasonUnsupported = "unsupported_type"
	ReasonEncrypted   = "encrypted"
	ReasonCorrupt     = "corrupt"
	ReasonBomb        = "decompression_bomb"
	ReasonEmpty       = "empty"
	// ReasonTooComplex: past a cap on its shape (pages, sheets, rows, columns, nesting,
	// elements), or the reader ran out of the memory or CPU it is allowed.
	ReasonTooComplex = "too_complex"
	// ReasonTimeout: the reading overran its deadline (TimeoutFor) and was stopped.
	ReasonTimeout = "timeout"
	// ReasonBusy (code rate_limited): every reading slot stayed busy for BusyWait.
	ReasonBusy = "busy"
)

// overText is the refusal of a document (of the kind given: "PDF", "XLSX") whose text is
// over MaxTextBytes, found while the text is built.
func overText(kind string) error {
	return refuse(ReasonBomb, "the %s's text is over %d MB", kind, MaxTextBytes>>20)
}

// Section is a part of a document's text: a PDF page, a spreadsheet's sheet, or the whole
// text of other types. Label names it ("page 3", "sheet Budget"); "" for the whole.
type Section struct {
	Label string
	Text  string
}

// Extracted is a document's text.
type Extracted struct {
	ContentType string // one of the Type* constants
	Title       string // an HTML page's title
	Sections    []Section
}

// Text is the whole text, sections separated by a blank line.
func (e Extracted) Text() string {
	parts := make([]string, 0, len(e.Sections))
	for _, s := range e.Sections {
		if s.Label != "" && len(e.Sections) > 1 {
			parts = append(parts, "["+s.Label+"]\n"+s.Text)
		} else {
			parts = append(parts, s.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

func refuse(reason, format string, a ...any) error {
	return steward.Refusef(steward.CodeInvalid, reason, format, a...)
}

// TypeOf decides a document's media type from its declared Content-Type and, when that is
// missing or generic (application/octet-stream), its name's extension; "" when neither is
// one Extract reads.
func TypeOf(name, declared string) string {
	mt, _, _ := mime.ParseMediaType(declared)
	switch mt {
	case TypePDF, TypeDOCX, TypeXLSX, TypeCSV, TypeText, TypeMarkdown, TypeHTML:
		return mt
	case "application/xhtml+xml":
		return TypeHTML
	case "text/x-markdown":
		return TypeMarkdown
	case "", "application/octet-stream", "binary/octet-stream":
	default:
		return ""
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".pdf":
		return TypePDF
	case ".docx":
		return TypeDOCX
	case ".xlsx":
		return TypeXLSX
	case ".csv":
		return TypeCSV
	case ".txt", ".text":
		return TypeText
	case ".md", ".markdown":
		return TypeMarkdown
	case ".html", ".htm":
		return TypeHTML
	}
	return ""
}

// Source is a document to read: its name and declared content type (either may be empty;
// TypeOf decides), its bytes, and for a page fetched from the web its URL, against which the
// page's links are made absolute. Owner is whom it is read for (an owner's id; "" for a
// reading of nobody's in particular, which shares one owner's share of the slots).
type Source struct {
	Name, ContentType string
	URL               string
	Owner             string
	// Data is the document's bytes; an upload spooled to a file gives File, of Size bytes,
	// instead, which the reading child gets without the bytes being held in memory.
	Data []byte
	File io.ReaderAt
	Size int64
}

// Len is how many bytes the document has.
func (s Source) Len() int64 {
	if s.File != nil {
		return s.Size
	}
	return int64(len(s.Data))
}

// Reader reads the document's bytes from the start.
func (s Source) Reader() io.Reader {
	if s.File != nil {
		return io.NewSectionReader(s.File, 0, s.Size)
	}
	return bytes.NewReader(s.Data)
}

// Extract reads the text of a document in one of the process's reading slots
// (ProcessReaders.Extract).
func Extract(ctx context.Context, src Source) (Extracted, error) {
	return ProcessReaders.Extract(ctx, src)
}

// Extract reads the text of a document. A type it does not read, an encrypted, corrupt or
// empty document, a decompression bomb and a document past the caps (pages, sheets, rows,
// columns, XML depth and elements, text) are refused with a *steward.Error (code invalid, a
// Reason* reason). The reading itself runs in a child process bounded in memory, CPU and
// time (sandbox.go): one that overruns its deadline (TimeoutFor) is killed and refused
// (ReasonTimeout). At most r.Slots() documents are read at once, and fewer for one owner
// (src.Owner); one that waits too long for a slot is refused as rate_limited (ReasonBusy)
// with when to try again.
func (r *Readers) Extract(ctx context.Context, src Source) (Extracted, error) {
	mt := TypeOf(src.Name, src.ContentType)
	if mt == "" {
		return Extracted{}, refuse(ReasonUnsupported, "%q (%s) is not a type Steward reads: PDF, DOCX, XLSX, CSV, TXT, Markdown or HTML", src.Name, orNone(src.ContentType))
	}
	if src.Len() == 0 {
		return Extracted{}, refuse(ReasonEmpty, "the document is empty")
	}
	ex, _, err := r.sandboxed(ctx, mt, src)
	return ex, err
}

// extract reads a document of media type mt in this process, bounded by the caps and by
// ctx: the code the sandbox's child runs, and the fuzz targets call.
func extract(ctx context.Context, mt string, src Source) (ex Extracted, err error) {
	data := src.Data
	switch mt {
	case TypePDF:
		ex.Sections, err = extractPDF(ctx, data)
	case TypeDOCX:
		ex.Sections, err = extractDOCX(ctx, data)
	case TypeXLSX:
		ex.Sections, err = extractXLSX(ctx, data)
	case TypeCSV:
		ex.Sections, err = extractCSV(ctx, data)
	case TypeHTML:
		ex.Title, ex.Sections, err = extractHTML(ctx, data, src.ContentType, src.URL)
	default:
		ex.Sections, err = extractText(data)
	}
	if err != nil {
		if ctx.Err() != nil {
			return Extracted{}, ctx.Err()
		}
		return Extracted{}, err
	}
	ex.ContentType = mt
	total := 0
	for i, s := range ex.Sections {
		ex.Sections[i].Text = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(s.Text, "\x00", ""), "\uFFFD"))
		total += len(ex.Sections[i].Text)
	}
	if total > MaxTextBytes {
		return Extracted{}, overText("document")
	}
	return ex, nil
}

func orNone(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// oleMagic starts a Compound File: a password-protected (encrypted) Office document, or the
// legacy binary .doc/.xls format.
var oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// extractDOCX reads the paragraphs of word/document.xml.
func extractDOCX(ctx context.Context, data []byte) ([]Section, error) {
	a, err := openZip(data, "DOCX")
	if err != nil {
		return nil, err
	}
	const part = "word/document.xml"
	if !a.has(part) {
		return nil, refuse(ReasonCorrupt, "the DOCX is corrupt: it has no word/document.xml")
	}
	var b strings.Builder
	inText := false
	err = a.walk(ctx, part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				b.WriteByte('\t')
			case "br", "cr":
				b.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				b.WriteByte('\n')
			case "tc":
				b.WriteByte('\t')
			}
		case xml.CharData:
			if inText {
				b.Write(t) // one piece of character data: at most a part's bytes
			}
		}
		if b.Len() > MaxTextBytes {
			return overText("DOCX")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []Section{{Text: b.String()}}, nil
}

// CSV bounds: a CSV's text is kept as it is, so it must be no larger than MaxTextBytes; its
// records and fields are counted while it is checked to parse.
const (
	MaxCSVRecords = 1 << 20
	MaxCSVFields  = MaxColumns
)

// extractCSV checks the CSV parses and keeps its text. Its records' fields are counted
// before it is parsed (csv.Reader holds a whole record, however many fields it has).
func extractCSV(ctx context.Context, data []byte) ([]Section, error) {
	if len(data) > MaxTextBytes {
		return nil, overText("CSV")
	}
	if !utf8.Valid(data) {
		return nil, refuse(ReasonCorrupt, "the CSV is not UTF-8 text")
	}
	if err := csvShape(data); err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	for n := 0; ; n++ {
		if _, err := r.Read(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, refuse(ReasonCorrupt, "the CSV does not parse: %v", err)
		}
		if n&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return []Section{{Text: string(data)}}, nil
}

// csvShape refuses a CSV with more than MaxCSVRecords lines or a line of more than
// MaxCSVFields fields, counting the commas and newlines outside quotes.
func csvShape(data []byte) error {
	quoted, records, fields := false, 1, 1
	for _, c := range data {
		switch {
		case c == '"':
			quoted = !quoted // "" inside quotes toggles twice
		case quoted:
		case c == ',':
			if fields++; fields > MaxCSVFields {
				return refuse(ReasonTooComplex, "the CSV's row %d has more than %d fields", records, MaxCSVFields)
			}
		case c == '\n':
			if records++; records > MaxCSVRecords {
				return refuse(ReasonTooComplex, "the CSV has more than %d rows", MaxCSVRecords)
			}
			fields = 1
		}
	}
	return nil
}

// extractText keeps a UTF-8 text (TXT, Markdown) as it is; binary data is refused.
func extractText(data []byte) ([]Section, error) {
	if len(data) > MaxTextBytes {
		return nil, overText("document")
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, refuse(ReasonCorrupt, "the document is not UTF-8 text")
	}
	return []Section{{Text: string(data)}}, nil
}
