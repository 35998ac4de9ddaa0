// Package document reads the owner's documents (issue 12): Extract turns an upload's bytes
// into text with well-kept libraries — github.com/ledongthuc/pdf for PDF,
// github.com/xuri/excelize/v2 for XLSX, archive/zip and encoding/xml for DOCX, encoding/csv,
// and codeberg.org/readeck/go-readability for HTML — and refuses encrypted, corrupt,
// decompression-bomb and unknown uploads with a client error (invalid: 422) and a reason.
package document

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"github.com/ledongthuc/pdf"
	"github.com/thedatashed/xlsxreader"
	"golang.org/x/net/html/charset"

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
	// refused before it is inflated.
	MaxUnzipped    = 100 << 20
	MaxStreamBytes = 100 << 20
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
)

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

// Extract reads the text of a document of the given name and declared content type. A type
// it does not read, an encrypted, corrupt or empty document and a decompression bomb are
// refused with a *steward.Error (code invalid, a Reason* reason).
func Extract(name, declared string, data []byte) (Extracted, error) {
	mt := TypeOf(name, declared)
	if mt == "" {
		return Extracted{}, refuse(ReasonUnsupported, "%q (%s) is not a type Steward reads: PDF, DOCX, XLSX, CSV, TXT, Markdown or HTML", name, orNone(declared))
	}
	if len(data) == 0 {
		return Extracted{}, refuse(ReasonEmpty, "the document is empty")
	}
	var ex Extracted
	var err error
	switch mt {
	case TypePDF:
		ex.Sections, err = extractPDF(data)
	case TypeDOCX:
		ex.Sections, err = extractDOCX(data)
	case TypeXLSX:
		ex.Sections, err = extractXLSX(data)
	case TypeCSV:
		ex.Sections, err = extractCSV(data)
	case TypeHTML:
		ex.Title, ex.Sections, err = extractHTML(data, declared)
	default:
		ex.Sections, err = extractText(data)
	}
	if err != nil {
		return Extracted{}, err
	}
	ex.ContentType = mt
	total := 0
	for i, s := range ex.Sections {
		ex.Sections[i].Text = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(s.Text, "\x00", ""), "\uFFFD"))
		total += len(ex.Sections[i].Text)
	}
	if total > MaxTextBytes {
		return Extracted{}, refuse(ReasonBomb, "the document's text is over %d bytes", MaxTextBytes)
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

// openZip opens an Office archive, refusing an encrypted one and one whose files declare
// more than MaxUnzipped bytes (archive/zip refuses a file that inflates past its declared
// size, so the declared sizes bound the work).
func openZip(data []byte, kind string) (*zip.Reader, error) {
	if bytes.HasPrefix(data, oleMagic) {
		return nil, refuse(ReasonEncrypted, "the %s is password-protected (encrypted) or in the legacy binary format; save it unprotected as %s", kind, kind)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, refuse(ReasonCorrupt, "the %s is corrupt: it is not a readable zip archive", kind)
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > MaxUnzipped {
			return nil, refuse(ReasonBomb, "the %s unpacks to more than %d bytes", kind, MaxUnzipped)
		}
	}
	return zr, nil
}

// extractDOCX reads the paragraphs of word/document.xml.
func extractDOCX(data []byte) ([]Section, error) {
	zr, err := openZip(data, "DOCX")
	if err != nil {
		return nil, err
	}
	f, err := zr.Open("word/document.xml")
	if err != nil {
		return nil, refuse(ReasonCorrupt, "the DOCX is corrupt: it has no word/document.xml")
	}
	defer f.Close()
	var b strings.Builder
	dec := xml.NewDecoder(io.LimitReader(f, MaxUnzipped))
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, refuse(ReasonCorrupt, "the DOCX is corrupt: its document XML does not parse")
		}
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
				b.Write(t)
			}
		}
		if b.Len() > MaxTextBytes {
			return nil, refuse(ReasonBomb, "the DOCX's text is over %d bytes", MaxTextBytes)
		}
	}
	return []Section{{Text: b.String()}}, nil
}

// extractXLSX reads every sheet's cells, a row per line, cells separated by tabs.
func extractXLSX(data []byte) ([]Section, error) {
	if _, err := openZip(data, "XLSX"); err != nil {
		return nil, err
	}
	f, err := xlsxreader.NewReader(data)
	if err != nil {
		return nil, refuse(ReasonCorrupt, "the XLSX is corrupt: %v", err)
	}
	var out []Section
	size := 0
	for _, sheet := range f.Sheets {
		var lines []string
		var failed error
		// ReadRows streams from a goroutine: drain it to the end even after a failure.
		for r := range f.ReadRows(sheet) {
			if failed != nil {
				continue
			}
			if r.Error != nil {
				failed = refuse(ReasonCorrupt, "the XLSX is corrupt: sheet %q: %v", sheet, r.Error)
				continue
			}
			line := rowText(r.Cells)
			if size += len(line); size > MaxTextBytes {
				failed = refuse(ReasonBomb, "the XLSX's text is over %d bytes", MaxTextBytes)
				continue
			}
			lines = append(lines, line)
		}
		if failed != nil {
			return nil, failed
		}
		out = append(out, Section{Label: "sheet " + sheet, Text: strings.Join(lines, "\n")})
	}
	return out, nil
}

// rowText is a row's cells separated by tabs, each in its column (an empty cell between two
// values stays an empty field).
func rowText(cells []xlsxreader.Cell) string {
	var b strings.Builder
	col := 0
	for _, c := range cells {
		for i := c.ColumnIndex(); col < i; col++ {
			if col > 0 {
				b.WriteByte('\t')
			}
		}
		if col > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(c.Value)
		col++
	}
	return b.String()
}

// extractCSV checks the CSV parses and keeps its text.
func extractCSV(data []byte) ([]Section, error) {
	if !utf8.Valid(data) {
		return nil, refuse(ReasonCorrupt, "the CSV is not UTF-8 text")
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if _, err := r.ReadAll(); err != nil {
		return nil, refuse(ReasonCorrupt, "the CSV does not parse: %v", err)
	}
	return []Section{{Text: string(data)}}, nil
}

// extractText keeps a UTF-8 text (TXT, Markdown) as it is; binary data is refused.
func extractText(data []byte) ([]Section, error) {
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, refuse(ReasonCorrupt, "the document is not UTF-8 text")
	}
	return []Section{{Text: string(data)}}, nil
}

// extractHTML keeps an HTML page's main content as text, like web_fetch.
func extractHTML(data []byte, declared string) (string, []Section, error) {
	r, err := charset.NewReader(bytes.NewReader(data), declared)
	if err != nil {
		return "", nil, refuse(ReasonCorrupt, "the page's charset is not readable")
	}
	article, err := readability.FromReader(r, nil)
	if err != nil {
		return "", nil, refuse(ReasonCorrupt, "the page could not be read: %v", err)
	}
	if article.Node == nil {
		return article.Title(), []Section{{}}, nil
	}
	return article.Title(), []Section{{Text: render.InnerText(article.Node)}}, nil
}

// ExtractPDF returns a PDF's text, a section per page (for web_fetch).
func ExtractPDF(data []byte) (Extracted, error) { return Extract("", TypePDF, data) }

// extractPDF reads a PDF's text page by page. The library panics on some malformed files:
// a panic is a corrupt document.
func extractPDF(data []byte) (out []Section, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, refuse(ReasonCorrupt, "the PDF is corrupt")
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, refuse(ReasonEncrypted, "the PDF is password-protected (encrypted); upload an unprotected copy")
	case err != nil:
		return nil, refuse(ReasonCorrupt, "the PDF is corrupt: %v", err)
	case !r.Trailer().Key("Encrypt").IsNull():
		return nil, refuse(ReasonEncrypted, "the PDF is encrypted; upload an unprotected copy")
	}
	n := r.NumPage()
	if n == 0 {
		return nil, refuse(ReasonCorrupt, "the PDF has no pages")
	}
	budget := int64(MaxStreamBytes)
	size := 0
	for i := 1; i <= n; i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		if budget, err = inflated(p.V.Key("Contents"), budget); err != nil {
			return nil, err
		}
		text, err := p.GetPlainText(nil)
		if err != nil {
			return nil, refuse(ReasonCorrupt, "the PDF's page %d is corrupt: %v", i, err)
		}
		size += len(text)
		if size > MaxTextBytes {
			return nil, refuse(ReasonBomb, "the PDF's text is over %d bytes", MaxTextBytes)
		}
		out = append(out, Section{Label: fmt.Sprintf("page %d", i), Text: text})
	}
	return out, nil
}

// inflated reads a page's content streams, decompressed, counting them against budget (the
// bytes left): a decompression bomb is refused before the text extractor inflates it.
func inflated(contents pdf.Value, budget int64) (int64, error) {
	streams := []pdf.Value{contents}
	if contents.Kind() == pdf.Array {
		streams = streams[:0]
		for i := 0; i < contents.Len(); i++ {
			streams = append(streams, contents.Index(i))
		}
	}
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		rc := s.Reader()
		n, err := io.Copy(io.Discard, io.LimitReader(rc, budget+1))
		rc.Close()
		if err != nil {
			return 0, refuse(ReasonCorrupt, "the PDF's content is corrupt: %v", err)
		}
		if budget -= n; budget < 0 {
			return 0, refuse(ReasonBomb, "the PDF's content inflates to more than %d bytes", MaxStreamBytes)
		}
	}
	return budget, nil
}
