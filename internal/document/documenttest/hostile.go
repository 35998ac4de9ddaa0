package documenttest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// Hostile is a document built to take a reader down: the tests, the fuzz targets' seeds and
// make bench-extract all use this corpus, made here, never downloaded.
type Hostile struct {
	Name string // its file name (the extension says its type)
	What string // what it does to a reader without bounds
	Data []byte
	// Endless: no cap stops it inside the reader (the PDF library loops); only the
	// sandbox's deadline does.
	Endless bool
}

// HostileCorpus builds every hostile document (in well under a second: see zipStreams).
func HostileCorpus() []Hostile {
	return []Hostile{
		{Name: "columns.xlsx", What: "one cell at column AAAAAAAA: a reader pads the row with 10^11 tabs", Data: XLSXCell("AAAAAAAA1", "x")},
		{Name: "column7.xlsx", What: "one cell at column AAAAAAA (7 letters: 1 GB of tabs)", Data: XLSXCell("AAAAAAA1", "x")},
		{Name: "farrow.xlsx", What: "one cell at row 10^15", Data: XLSXCell("A1000000000000000", "x")},
		{Name: "strings.xlsx", What: "a million shared strings", Data: XLSXSharedStrings(1 << 20)},
		{Name: "selfkids.pdf", What: "a /Pages node whose /Kids is itself", Data: PDFSelfKids()},
		{Name: "count.pdf", What: "/Count 4e18 with one real page", Data: PDFHugeCount()},
		{Name: "objstm.pdf", What: "an object stream of 10^15 objects that extends itself", Data: PDFObjectStream(), Endless: true},
		{Name: "nested.docx", What: "30 million unclosed elements in document.xml (90 MB)", Data: DOCXNested(30 << 20)},
		{Name: "nested1m.docx", What: "a million unclosed elements in document.xml (3 MB: under the archive's caps)", Data: DOCXNested(1 << 20)},
		{Name: "manyns.docx", What: "one element declaring 1.4 million namespaces (16 MB, under the archive's caps)", Data: DOCXManyNamespaces(16 << 20)},
		{Name: "forged.docx", What: "a zip whose document.xml declares 200 bytes and inflates to 40 MB", Data: DOCXForgedSize(40 << 20)},
		{Name: "laughs.docx", What: "billion laughs: entities of entities in document.xml", Data: DOCXBillionLaughs()},
		{Name: "laughs.xlsx", What: "billion laughs in the shared strings", Data: XLSXBillionLaughs()},
		{Name: "nested.html", What: "a million nested <div>s", Data: HTMLNested(1_000_000)},
		{Name: "wide.csv", What: "a CSV row of a million fields", Data: []byte(strings.Repeat(",", 1_000_000) + "\n")},
	}
}

// zipOf writes an archive of parts (name, text) in order, deflated at the best compression.
func zipOf(parts ...[2]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestCompression) })
	for _, p := range parts {
		w, err := zw.Create(p[0])
		if err != nil {
			panic(err)
		}
		if _, err := io.WriteString(w, p[1]); err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

const (
	sheetHead = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
	sheetTail = `</sheetData></worksheet>`
	workbook  = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`
	wbRels    = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`
	styles    = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs></styleSheet>`
)

// xlsxOf is a one-sheet workbook of the sheet's rows (XML) and shared strings (XML of <si>s).
func xlsxOf(rows, shared string) []byte {
	return zipOf(
		[2]string{"xl/workbook.xml", workbook},
		[2]string{"xl/_rels/workbook.xml.rels", wbRels},
		[2]string{"xl/styles.xml", styles},
		[2]string{"xl/sharedStrings.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` + shared + `</sst>`},
		[2]string{"xl/worksheets/sheet1.xml", sheetHead + rows + sheetTail},
	)
}

// XLSXCell is a workbook with one inline-string cell at ref.
func XLSXCell(ref, text string) []byte {
	row := strings.TrimLeft(ref, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	return xlsxOf(fmt.Sprintf(`<row r="%s"><c r="%s" t="inlineStr"><is><t>%s</t></is></c></row>`, row, ref, text), "")
}

// XLSXSharedStrings is a workbook with n shared strings (a multiple of 1,024) and one cell
// using the last.
func XLSXSharedStrings(n int) []byte {
	return zipStreams(
		stream{name: "xl/workbook.xml", segments: []segment{{data: []byte(workbook), times: 1}}},
		stream{name: "xl/_rels/workbook.xml.rels", segments: []segment{{data: []byte(wbRels), times: 1}}},
		stream{name: "xl/styles.xml", segments: []segment{{data: []byte(styles), times: 1}}},
		stream{name: "xl/sharedStrings.xml", segments: []segment{
			{data: []byte(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`), times: 1},
			{data: bytes.Repeat([]byte("<si><t>x</t></si>"), 1<<10), times: n >> 10},
			{data: []byte("</sst>"), times: 1},
		}},
		stream{name: "xl/worksheets/sheet1.xml", segments: []segment{{data: []byte(sheetHead + fmt.Sprintf(`<row r="1"><c r="A1" t="s"><v>%d</v></c></row>`, n-1) + sheetTail), times: 1}}},
	)
}

// laughs is the billion-laughs DOCTYPE: lol9 expands to 10^9 "lol"s.
func laughs() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">`)
	prev := "lol"
	for i := 1; i <= 9; i++ {
		name := fmt.Sprintf("lol%d", i)
		fmt.Fprintf(&b, `<!ENTITY %s "%s">`, name, strings.Repeat("&"+prev+";", 10))
		prev = name
	}
	b.WriteString(`]>`)
	return b.String()
}

// XLSXBillionLaughs is a workbook whose shared string is &lol9;.
func XLSXBillionLaughs() []byte {
	return zipOf(
		[2]string{"xl/workbook.xml", workbook},
		[2]string{"xl/_rels/workbook.xml.rels", wbRels},
		[2]string{"xl/sharedStrings.xml", laughs() + `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>&lol9;</t></si></sst>`},
		[2]string{"xl/worksheets/sheet1.xml", sheetHead + `<row r="1"><c r="A1" t="s"><v>0</v></c></row>` + sheetTail},
	)
}

const docxHead = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`

// DOCXNested is a DOCX whose document.xml opens n elements (<a>, a multiple of 65,536)
// and closes none.
func DOCXNested(n int) []byte {
	return zipStreams(
		stream{name: "word/document.xml", segments: []segment{{data: []byte(docxHead), times: 1}, {data: bytes.Repeat([]byte("<a>"), 1<<16), times: n >> 16}}},
	)
}

// DOCXManyNamespaces is a DOCX whose document.xml is one paragraph whose start tag declares
// namespaces (xmlns:n="u") for about n bytes (a multiple of 12,288): one element, so no cap on
// elements or depth stops it, and a reader keeps every attribute of a start tag.
func DOCXManyNamespaces(n int) []byte {
	return zipStreams(stream{name: "word/document.xml", segments: []segment{
		{data: []byte(docxHead + "<w:p"), times: 1},
		{data: bytes.Repeat([]byte(` xmlns:n="u"`), 1<<10), times: n / (12 << 10)},
		{data: []byte("><w:r><w:t>hi</w:t></w:r></w:p></w:body></w:document>"), times: 1},
	}})
}

// DOCXBillionLaughs is a DOCX whose text is &lol9;.
func DOCXBillionLaughs() []byte {
	return zipOf([2]string{"word/document.xml", laughs() + strings.TrimPrefix(docxHead, `<?xml version="1.0" encoding="UTF-8"?>`) + `<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`})
}

// DOCXForgedSize is a DOCX whose document.xml (one paragraph of n bytes of text, a multiple
// of 1,024) is stored with a forged uncompressed size of 200 bytes in both its headers.
func DOCXForgedSize(n int) []byte {
	return zipStreams(stream{name: "word/document.xml", declared: 200, segments: []segment{
		{data: []byte(docxHead + "<w:p><w:r><w:t>"), times: 1},
		{data: bytes.Repeat([]byte("a"), 1<<10), times: n >> 10},
		{data: []byte("</w:t></w:r></w:p></w:body></w:document>"), times: 1},
	}})
}

// segment is data that a stream holds times times in a row.
type segment struct {
	data  []byte
	times int
}

// stream is a file of a zip made of segments; declared, when set, is the uncompressed size
// its headers claim instead of the true one.
type stream struct {
	name     string
	declared uint64
	segments []segment
}

// zipStreams writes an archive of streams, each deflated in the time it takes to deflate its
// segments once: a segment deflated by a fresh writer and flushed (byte-aligned blocks that
// refer only to it) can be repeated, and a final empty block ends the stream. So a 90 MB part
// costs its 200 KB segment, also under the race detector.
func zipStreams(streams ...stream) []byte {
	var final bytes.Buffer
	fw, _ := flate.NewWriter(&final, flate.BestCompression)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, st := range streams {
		var deflated bytes.Buffer
		crc, size := uint32(0), uint64(0)
		for _, sg := range st.segments {
			var one bytes.Buffer
			w, _ := flate.NewWriter(&one, flate.BestCompression)
			w.Write(sg.data)
			w.Flush()
			for range sg.times {
				deflated.Write(one.Bytes())
				crc = crc32.Update(crc, crc32.IEEETable, sg.data)
			}
			size += uint64(len(sg.data) * sg.times)
		}
		deflated.Write(final.Bytes())
		if st.declared != 0 {
			size = st.declared
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: st.name, Method: zip.Deflate, CRC32: crc,
			CompressedSize64: uint64(deflated.Len()), UncompressedSize64: size})
		if err != nil {
			panic(err)
		}
		w.Write(deflated.Bytes())
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// HTMLNested is a page of n nested <div>s, none closed.
func HTMLNested(n int) []byte {
	return []byte("<html><body>" + strings.Repeat("<div>", n) + "deep")
}

// rawPDF writes a PDF of the given objects (1 0 obj is objs[0]) with a classic xref table
// and a trailer naming 1 0 R as the root.
func rawPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

const (
	pdfContent = "<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 712 Td (Hello world) Tj ET\nendstream"
	pdfFont    = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
)

// PDFSelfKids is a PDF whose page tree root lists itself as its only kid.
func PDFSelfKids() []byte {
	return rawPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
}

// PDFHugeCount is a PDF of one real page whose page tree claims 4e18 pages.
func PDFHugeCount() []byte {
	return rawPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 4000000000000000000 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		pdfContent, pdfFont,
	)
}

// PDFObjectStream is a PDF 1.5 (an xref stream) whose page lives in an object stream that
// declares 10^15 objects, holds none of them, and extends itself.
func PDFObjectStream() []byte { return PDFObjectStreamOf(0) }

// PDFObjectStreamOf is PDFObjectStream grown by a comment of pad bytes (the sandbox's
// deadline grows with a document's size: make bench-extract's 19 MB reading).
func PDFObjectStreamOf(pad int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	if pad > 0 {
		b.WriteString("%")
		b.Write(bytes.Repeat([]byte("x"), pad))
		b.WriteString("\n")
	}
	offsets := map[int]int{}
	obj := func(n int, body string) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	streamData := "9 0 "
	obj(4, fmt.Sprintf("<< /Type /ObjStm /N 1000000000000000 /First 4 /Extends 4 0 R /Length %d >>\nstream\n%s\nendstream", len(streamData), streamData))
	// The xref stream (object 5): W [1 4 2]; object 3 is in stream 4 at index 0.
	var rows bytes.Buffer
	row := func(typ byte, f2 uint32, f3 uint16) {
		rows.WriteByte(typ)
		rows.Write([]byte{byte(f2 >> 24), byte(f2 >> 16), byte(f2 >> 8), byte(f2)})
		rows.Write([]byte{byte(f3 >> 8), byte(f3)})
	}
	row(0, 0, 65535)
	row(1, uint32(offsets[1]), 0)
	row(1, uint32(offsets[2]), 0)
	row(2, 4, 0)
	row(1, uint32(offsets[4]), 0)
	xref := b.Len()
	row(1, uint32(xref), 0)
	fmt.Fprintf(&b, "5 0 obj\n<< /Type /XRef /Size 6 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", rows.Len())
	b.Write(rows.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}
