package doctext_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/document/documenttest"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/steward"
)

// TestExtract: the text of real files generated here comes out of each reader.
func TestExtract(t *testing.T) {
	cases := []struct {
		name, file, ctype string
		data              []byte
		want              []string
	}{
		{"pdf", "report.pdf", "application/pdf", documenttest.PDF(t, "First page about apples.", "Second page about pears.", "The third page says the vault code is 4711."),
			[]string{"apples", "pears", "the vault code is 4711"}},
		{"docx", "letter.docx", "", documenttest.DOCX(t, "Dear Ada,", "The meeting moves to Thursday."), []string{"Dear Ada,", "The meeting moves to Thursday."}},
		{"xlsx", "budget.xlsx", doctext.TypeXLSX, documenttest.XLSX(t, "budget.xlsx"), []string{"Item\tCost", "Rent\t1200", "Coffee\t42"}},
		{"xlsx with an empty cell", "gaps.xlsx", doctext.TypeXLSX, documenttest.XLSX(t, "gaps.xlsx"), []string{"Item\t\tNote", "\tCost"}},
		{"csv", "people.csv", "text/csv; charset=utf-8", []byte("name,city\nAda,London\n\"Grace, Rear Admiral\",Arlington\n"), []string{"Ada,London", "Grace, Rear Admiral"}},
		{"txt", "notes.txt", "application/octet-stream", []byte("plain notes about the garden"), []string{"plain notes about the garden"}},
		{"markdown", "readme.md", "text/markdown", []byte("# Title\n\nSome *markdown* text."), []string{"Some *markdown* text."}},
		{"html", "page.html", "text/html; charset=utf-8", []byte(`<html><head><title>Recipes</title></head><body><nav>Menu Home About</nav><article><h1>Bread</h1><p>Knead the dough for ten minutes, then let it rest for an hour in a warm place until it doubles in size.</p><p>Bake at 220 degrees for thirty minutes until the crust is golden and sounds hollow.</p></article></body></html>`),
			[]string{"Knead the dough for ten minutes", "Bake at 220 degrees"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex, err := doctext.Extract(context.Background(), doctext.Source{Name: c.file, ContentType: c.ctype, Data: c.data})
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			text := ex.Text()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
		})
	}
	ex, err := doctext.Extract(context.Background(), doctext.Source{Name: "report.pdf", Data: documenttest.PDF(t, "one", "two", "three is here")})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Sections) != 3 || ex.Sections[2].Label != "page 3" || !strings.Contains(ex.Sections[2].Text, "three is here") {
		t.Fatalf("PDF sections = %+v; want three pages, the third labelled page 3", ex.Sections)
	}
}

// TestExtractRefuses: encrypted, corrupt, bomb, empty and unknown documents are refused with
// a client error (invalid, 422) naming the reason.
func TestExtractRefuses(t *testing.T) {
	bomb := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("word/document.xml")
		zeros := make([]byte, 1<<20)
		for range 101 {
			_, _ = w.Write(zeros)
		}
		_ = zw.Close()
		return buf.Bytes()
	}()
	cases := []struct {
		name, file, ctype string
		data              []byte
		reason            string
	}{
		{"encrypted pdf", "secret.pdf", "application/pdf", documenttest.EncryptedPDF(t, "hidden"), doctext.ReasonEncrypted},
		{"corrupt pdf", "broken.pdf", "application/pdf", []byte("%PDF-1.4\nthis is not a pdf at all"), doctext.ReasonCorrupt},
		{"truncated pdf", "cut.pdf", "application/pdf", documenttest.PDF(t, "a page")[:200], doctext.ReasonCorrupt},
		{"encrypted docx", "locked.docx", "", append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 512)...), doctext.ReasonEncrypted},
		{"corrupt docx", "broken.docx", "", []byte("PK not really a zip"), doctext.ReasonCorrupt},
		{"zip bomb docx", "bomb.docx", "", bomb, doctext.ReasonBomb},
		{"corrupt xlsx", "broken.xlsx", "", documenttest.Zip(t, map[string]string{"hello.txt": "no workbook here"}), doctext.ReasonCorrupt},
		{"binary txt", "notes.txt", "text/plain", []byte{0xff, 0xfe, 0x00, 0x01}, doctext.ReasonCorrupt},
		{"unknown type", "photo.png", "image/png", []byte("\x89PNG\r\n"), doctext.ReasonUnsupported},
		{"unknown extension", "archive.zip", "", []byte("PK"), doctext.ReasonUnsupported},
		{"empty", "empty.txt", "text/plain", nil, doctext.ReasonEmpty},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := doctext.Extract(context.Background(), doctext.Source{Name: c.file, ContentType: c.ctype, Data: c.data})
			var se *steward.Error
			if !errors.As(err, &se) || se.Code != steward.CodeInvalid || se.Reason != c.reason {
				t.Fatalf("Extract = %v; want an invalid error with reason %s", err, c.reason)
			}
		})
	}
}
