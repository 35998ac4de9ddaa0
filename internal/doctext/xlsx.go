package doctext

import (
	"context"
	"encoding/xml"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Bounds of a spreadsheet, Excel's own (16,384 columns, 1,048,576 rows), and of what
// Steward keeps of one: a cell past them is refused, never padded to.
const (
	MaxColumns       = 16384
	MaxRows          = 1 << 20
	MaxSheets        = 256
	MaxSharedStrings = 200_000
)

// extractXLSX reads every sheet's cells, a row per line, cells separated by tabs, each in
// its column. It streams the workbook's XML itself (encoding/xml through walk's bounds)
// rather than through a spreadsheet library: the ones at hand pad a row to any column a cell
// names, keep every part inflated in memory, or read on in a goroutine that cannot be
// stopped, and a hostile sheet must cost no more than its caps.
func extractXLSX(ctx context.Context, data []byte) ([]Section, error) {
	a, err := openZip(data, "XLSX")
	if err != nil {
		return nil, err
	}
	wb, err := readWorkbook(ctx, a)
	if err != nil {
		return nil, err
	}
	budget := MaxTextBytes
	var out []Section
	for _, sh := range wb.sheets {
		text, err := wb.readSheet(ctx, a, sh, &budget)
		if err != nil {
			return nil, err
		}
		out = append(out, Section{Label: "sheet " + sh.name, Text: text})
	}
	return out, nil
}

// workbook is what a sheet's cells need: the shared strings, which styles are dates, and the
// date system.
type workbook struct {
	sheets     []sheetRef
	texts      []byte  // the shared strings, one after another
	ends       []int32 // where each shared string ends in texts
	dateStyles map[int]bool
	date1904   bool
}

type sheetRef struct{ name, part string }

const (
	workbookPart = "xl/workbook.xml"
	relsPart     = "xl/_rels/workbook.xml.rels"
)

// readWorkbook reads the sheets' names and parts, the shared strings and the styles.
func readWorkbook(ctx context.Context, a *archive) (*workbook, error) {
	if !a.has(workbookPart) {
		return nil, refuse(ReasonCorrupt, "the XLSX is corrupt: it has no workbook")
	}
	targets := map[string]string{} // relationship id → part
	var stringsPart, stylesPart = "xl/sharedStrings.xml", "xl/styles.xml"
	if a.has(relsPart) {
		err := a.walk(ctx, relsPart, func(tok xml.Token) error {
			se, ok := tok.(xml.StartElement)
			if !ok || se.Name.Local != "Relationship" {
				return nil
			}
			target := attr(se, "Target")
			if strings.HasPrefix(target, "/") {
				target = strings.TrimPrefix(target, "/")
			} else {
				target = path.Join("xl", target)
			}
			switch typ := attr(se, "Type"); {
			case strings.HasSuffix(typ, "/sharedStrings"):
				stringsPart = target
			case strings.HasSuffix(typ, "/styles"):
				stylesPart = target
			default:
				targets[attr(se, "Id")] = target
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	wb := &workbook{dateStyles: map[int]bool{}}
	err := a.walk(ctx, workbookPart, func(tok xml.Token) error {
		se, ok := tok.(xml.StartElement)
		if !ok {
			return nil
		}
		switch se.Name.Local {
		case "workbookPr":
			v := attr(se, "date1904")
			wb.date1904 = v == "1" || v == "true"
		case "sheet":
			if len(wb.sheets) == MaxSheets {
				return refuse(ReasonTooComplex, "the XLSX has more than %d sheets", MaxSheets)
			}
			part := targets[attr(se, "id")]
			if part == "" {
				part = "xl/worksheets/sheet" + attr(se, "sheetId") + ".xml"
			}
			wb.sheets = append(wb.sheets, sheetRef{name: attr(se, "name"), part: part})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if a.has(stringsPart) {
		if err := wb.readStrings(ctx, a, stringsPart); err != nil {
			return nil, err
		}
	}
	if a.has(stylesPart) {
		if err := wb.readStyles(ctx, a, stylesPart); err != nil {
			return nil, err
		}
	}
	return wb, nil
}

// readStrings reads the shared strings: each <si>'s text, without phonetic runs (<rPh>), kept
// end to end in one buffer (a string header each would cost more than most of them).
func (wb *workbook) readStrings(ctx context.Context, a *archive, part string) error {
	inSI, inT, phonetic := false, false, 0
	return a.walk(ctx, part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI = true
			case "rPh":
				phonetic++
			case "t":
				inT = inSI && phonetic == 0
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				if len(wb.ends) == MaxSharedStrings {
					return refuse(ReasonTooComplex, "the XLSX has more than %d different texts in its cells", MaxSharedStrings)
				}
				wb.ends = append(wb.ends, int32(len(wb.texts)))
				inSI = false
			case "rPh":
				phonetic--
			case "t":
				inT = false
			}
		case xml.CharData:
			if inT {
				if len(wb.texts)+len(t) > MaxTextBytes {
					return overText("XLSX")
				}
				wb.texts = append(wb.texts, t...)
			}
		}
		return nil
	})
}

// readStyles marks the cell formats (cellXfs, by index) that show a number as a date: the
// built-in date formats and custom ones whose code has date or time letters.
func (wb *workbook) readStyles(ctx context.Context, a *archive, part string) error {
	custom := map[string]string{} // numFmtId → formatCode
	var xfs []string              // cellXfs' numFmtIds, in order
	inXfs := false
	err := a.walk(ctx, part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "numFmt":
				custom[attr(t, "numFmtId")] = attr(t, "formatCode")
			case "cellXfs":
				inXfs = true
			case "xf":
				if inXfs {
					xfs = append(xfs, attr(t, "numFmtId"))
				}
			}
		case xml.EndElement:
			if t.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, id := range xfs {
		n, _ := strconv.Atoi(id)
		if (n >= 14 && n <= 22) || (n >= 45 && n <= 47) || (n >= 164 && isDateFormat(custom[id])) {
			wb.dateStyles[i] = true
		}
	}
	return nil
}

// formatLiterals are the parts of a number format that show no date field: [colour] or
// [$-locale] brackets, escaped characters and quoted text.
var formatLiterals = regexp.MustCompile(`\[[^\]]*\]|\\.|"[^"]*"`)

func isDateFormat(code string) bool {
	return strings.ContainsAny(formatLiterals.ReplaceAllString(code, ""), "dmhysDMHYS")
}

// readSheet appends a sheet's rows to a text, a row per line, taking what it writes from
// budget (the bytes of text left for the whole workbook).
func (wb *workbook) readSheet(ctx context.Context, a *archive, sh sheetRef, budget *int) (string, error) {
	r := &sheetReader{wb: wb, sh: sh, budget: budget}
	err := a.walk(ctx, sh.part, func(tok xml.Token) error {
		switch t := tok.(type) {
		case xml.StartElement:
			return r.start(t)
		case xml.EndElement:
			return r.end(t)
		case xml.CharData:
			return r.chars(t)
		}
		return nil
	})
	return r.b.String(), err
}

// sheetReader is the state of reading one sheet's XML into tab-separated rows.
type sheetReader struct {
	wb                        *workbook
	sh                        sheetRef
	budget                    *int
	b                         strings.Builder
	c                         cell
	inCell, inValue, inInline bool
	phonetic                  int
	row, col, lastRow         int // 1-based row; columns written in this row; the previous row
	rowStarted                bool
}

// write appends s to the text, within the budget.
func (r *sheetReader) write(s string) error {
	if *r.budget -= len(s); *r.budget < 0 {
		return overText("XLSX")
	}
	r.b.WriteString(s)
	return nil
}

func (r *sheetReader) start(t xml.StartElement) error {
	switch t.Name.Local {
	case "row":
		return r.startRow(t)
	case "c":
		r.c.ref, r.c.typ, r.c.has = attr(t, "r"), attr(t, "t"), false
		r.c.style, _ = strconv.Atoi(attr(t, "s"))
		r.c.text.Reset()
		r.inCell = true
	case "v":
		r.inValue = r.inCell
	case "is":
		r.inInline = r.inCell
	case "rPh":
		r.phonetic++
	}
	return nil
}

func (r *sheetReader) startRow(t xml.StartElement) error {
	r.row = r.lastRow + 1
	if ref := attr(t, "r"); ref != "" {
		n, err := strconv.Atoi(ref)
		if err != nil || n < 1 {
			return refuse(ReasonCorrupt, "the XLSX is corrupt: sheet %q has a row numbered %q", r.sh.name, ref)
		}
		r.row = n
	}
	if r.row > MaxRows {
		return refuse(ReasonTooComplex, "sheet %q has a row past row %d, the last one a spreadsheet has", r.sh.name, MaxRows)
	}
	r.lastRow, r.col, r.rowStarted = r.row, 0, false
	return nil
}

func (r *sheetReader) end(t xml.EndElement) error {
	switch t.Name.Local {
	case "c":
		r.inCell = false
		if !r.c.has {
			return nil
		}
		return r.endCell()
	case "v":
		r.inValue = false
	case "is":
		r.inInline = false
	case "rPh":
		r.phonetic--
	}
	return nil
}

// endCell writes the cell's value in its column.
func (r *sheetReader) endCell() error {
	at := r.col
	if r.c.ref != "" {
		n, ok := columnOf(r.c.ref)
		if !ok {
			return refuse(ReasonTooComplex, "sheet %q has a cell %.20q past column XFD, the last one a spreadsheet has", r.sh.name, r.c.ref)
		}
		at = n
	}
	if at < r.col {
		return refuse(ReasonCorrupt, "the XLSX is corrupt: sheet %q has cells out of order in row %d", r.sh.name, r.row)
	}
	if at >= MaxColumns {
		return refuse(ReasonTooComplex, "sheet %q has more than %d columns", r.sh.name, MaxColumns)
	}
	v, err := r.wb.value(&r.c)
	if err != nil {
		return err
	}
	// A tab for each column before this one, so a value stays in its column.
	sep := strings.Repeat("\t", at-r.col)
	if r.rowStarted {
		sep += "\t"
	} else if r.b.Len() > 0 {
		sep = "\n" + sep
	}
	r.rowStarted, r.col = true, at+1
	if err := r.write(sep); err != nil {
		return err
	}
	return r.write(v)
}

func (r *sheetReader) chars(t xml.CharData) error {
	if (r.inValue || r.inInline && r.phonetic == 0) && r.inCell {
		if r.c.text.Len()+len(t) > *r.budget {
			return overText("XLSX")
		}
		r.c.text.Write(t)
		r.c.has = true
	}
	return nil
}

// cell is a cell as the sheet's XML has it.
type cell struct {
	ref, typ string
	text     strings.Builder
	style    int
	has      bool // a <v> or an inline string was there
}

// columnOf is the 0-based column of a cell reference ("A1" → 0, "AA7" → 26); false when the
// column is past MaxColumns or the reference has no letters.
func columnOf(ref string) (int, bool) {
	n, letters := 0, 0
	for _, r := range ref {
		switch {
		case r >= 'A' && r <= 'Z':
			n = n*26 + int(r-'A') + 1
		case r >= 'a' && r <= 'z':
			n = n*26 + int(r-'a') + 1
		default:
			continue
		}
		if letters++; n > MaxColumns {
			return 0, false
		}
	}
	return n - 1, letters > 0
}

// value is a cell's text: a shared string, an inline string, TRUE/FALSE, a date or datetime
// (ISO 8601) for a number in a date format, else the value as stored.
func (wb *workbook) value(c *cell) (string, error) {
	text := c.text.String()
	switch c.typ {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil || i < 0 || i >= len(wb.ends) {
			return "", refuse(ReasonCorrupt, "the XLSX is corrupt: cell %.20s names a text it does not have", c.ref)
		}
		start := int32(0)
		if i > 0 {
			start = wb.ends[i-1]
		}
		return string(wb.texts[start:wb.ends[i]]), nil
	case "b":
		if strings.TrimSpace(text) == "1" {
			return "TRUE", nil
		}
		return "FALSE", nil
	case "", "n":
		if wb.dateStyles[c.style] {
			if d, ok := excelDate(text, wb.date1904); ok {
				return d, nil
			}
		}
	}
	return text, nil
}

// excelDate is a date serial as a date ("2026-12-03") or, with a time of day, an RFC 3339
// datetime; false for a serial that is not a number or a date Excel can show.
func excelDate(serial string, date1904 bool) (string, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(serial), 64)
	if err != nil || f < 0 || f >= 2958466 || math.IsNaN(f) {
		return "", false
	}
	epoch := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if date1904 {
		epoch = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	days := math.Trunc(f)
	t := epoch.AddDate(0, 0, int(days)).Add(time.Duration(math.Round((f-days)*86400)) * time.Second)
	if f == days {
		return t.Format("2006-01-02"), true
	}
	return t.Format(time.RFC3339), true
}
