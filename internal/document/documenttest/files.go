// Package documenttest builds small real documents (PDF, DOCX, zip; the XLSX are committed
// fixtures) for tests of the extraction, the document routes and tools, and web_fetch.
package documenttest

import (
	"archive/zip"
	"bytes"
	"embed"
	"fmt"
	"html"
	"testing"

	"github.com/go-pdf/fpdf"
)

//go:embed testdata/*.xlsx
var fixtures embed.FS

// PDF writes a PDF with one page per text, in a core font.
func PDF(t testing.TB, pages ...string) []byte {
	t.Helper()
	return writePDF(t, func(*fpdf.Fpdf) {}, pages...)
}

// EncryptedPDF writes a password-protected PDF.
func EncryptedPDF(t testing.TB, text string) []byte {
	t.Helper()
	return writePDF(t, func(p *fpdf.Fpdf) { p.SetProtection(fpdf.CnProtectPrint, "user-secret", "owner-secret") }, text)
}

func writePDF(t testing.TB, setup func(*fpdf.Fpdf), pages ...string) []byte {
	t.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	setup(p)
	p.SetFont("Helvetica", "", 12)
	for _, text := range pages {
		p.AddPage()
		p.MultiCell(180, 6, text, "", "L", false)
	}
	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// DOCX writes a minimal Word document with one paragraph per text.
func DOCX(t testing.TB, paragraphs ...string) []byte {
	t.Helper()
	body := ""
	for _, p := range paragraphs {
		body += fmt.Sprintf(`<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, html.EscapeString(p))
	}
	return Zip(t, map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body + `</w:body></w:document>`,
	})
}

// Zip writes a zip archive of the given files.
func Zip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, text := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// XLSX returns a workbook committed under testdata/ (written once by a spreadsheet library,
// so none is a dependency): "budget.xlsx" has a sheet "Budget" with the rows
// Item/Cost, Rent/1200 and Coffee/42; "gaps.xlsx" has the rows Item/(empty)/Note and
// (empty)/Cost.
func XLSX(t testing.TB, name string) []byte {
	t.Helper()
	data, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
