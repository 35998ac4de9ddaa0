package ledger

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stewardhq/steward/internal/steward"
)

// Row is one parsed statement line: a signed amount in minor units (negative = money out).
type Row struct {
	Line         int
	Date         time.Time
	Description  string
	AmountMinor  int64
	BalanceMinor *int64
}

// Rejection is a statement line that could not be read, with its 1-based line number.
type Rejection struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// dateFormats are the statement date layouts Parse recognises, by the name a caller may
// pass as date_format.
var dateFormats = []struct{ name, layout string }{
	{"YYYY-MM-DD", "2006-01-02"},
	{"DD.MM.YYYY", "02.01.2006"},
	{"DD/MM/YYYY", "02/01/2006"},
	{"MM/DD/YYYY", "01/02/2006"},
	{"YYYY/MM/DD", "2006/01/02"},
	{"DD-MM-YYYY", "02-01-2006"},
	{"DD.MM.YY", "02.01.06"},
	{"D MMM YYYY", "2 Jan 2006"},
}

// DateFormats lists the names accepted as date_format.
func DateFormats() []string {
	out := make([]string, len(dateFormats))
	for i, f := range dateFormats {
		out[i] = f.name
	}
	return out
}

// column roles, recognised from header names (lower case, any language the banks use).
var headerWords = map[string][]string{
	"date":        {"date", "datum", "buchungstag", "booking date", "transaction date", "posted", "valuta", "wertstellung"},
	"amount":      {"amount", "betrag", "value", "umsatz", "sum"},
	"debit":       {"debit", "soll", "withdrawal", "withdrawals", "paid out", "money out", "out", "ausgang"},
	"credit":      {"credit", "haben", "deposit", "deposits", "paid in", "money in", "in", "eingang"},
	"description": {"description", "payee", "merchant", "name", "verwendungszweck", "memo", "details", "text", "buchungstext", "narrative", "reference", "empfänger", "beguenstigter/zahlungspflichtiger"},
	"balance":     {"balance", "saldo", "kontostand", "running balance"},
}

// layout is where each role's column is; -1 when absent.
type layout struct {
	date, amount, debit, credit, balance int
	desc                                 []int
}

// Parse reads a bank statement in CSV: it detects the delimiter, an optional header, the
// date, amount (one signed column or debit/credit columns), description and balance
// columns, the decimal mark and the date format (dateFormat, a name from DateFormats,
// overrides the detection). Lines it cannot read are returned as rejections with their
// line number; a file whose shape cannot be recognised at all is an invalid-input error.
func Parse(data []byte, dateFormat string) ([]Row, []Rejection, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		return nil, nil, steward.Errorf(steward.CodeInvalid, "the statement is not UTF-8 text")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, steward.Errorf(steward.CodeInvalid, "the statement is empty")
	}
	records, lines, bad := readRecords(data, detectDelimiter(data))
	if len(records) == 0 {
		return nil, nil, steward.Errorf(steward.CodeInvalid, "the statement has no readable lines")
	}
	lay, header, err := detectLayout(records)
	if err != nil {
		return nil, nil, err
	}
	if header {
		records, lines = records[1:], lines[1:]
	}
	dates := make([]string, 0, len(records))
	var amounts []string
	for _, r := range records {
		dates = append(dates, field(r, lay.date))
		for _, c := range []int{lay.amount, lay.debit, lay.credit, lay.balance} {
			if s := field(r, c); s != "" {
				amounts = append(amounts, s)
			}
		}
	}
	dl, err := chooseDateLayout(dates, dateFormat)
	if err != nil {
		return nil, nil, err
	}
	comma := decimalComma(amounts)
	var rows []Row
	rejected := bad
	for i, r := range records {
		row, err := toRow(r, lay, dl, comma)
		if err != nil {
			rejected = append(rejected, Rejection{Line: lines[i], Reason: err.Error()})
			continue
		}
		row.Line = lines[i]
		rows = append(rows, row)
	}
	sortRejections(rejected)
	return rows, rejected, nil
}

// detectDelimiter picks, among , ; tab and |, the one that splits the first lines into the
// same number (more than one) of fields most often.
func detectDelimiter(data []byte) rune {
	best, bestScore := ',', -1
	for _, d := range []rune{',', ';', '\t', '|'} {
		recs, _, _ := readRecords(firstLines(data, 20), d)
		counts := map[int]int{}
		for _, r := range recs {
			if len(r) > 1 {
				counts[len(r)]++
			}
		}
		score := 0
		for n, c := range counts {
			if c*100+n > score {
				score = c*100 + n
			}
		}
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

func firstLines(data []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(data); n-- {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return data
		}
		i += j + 1
	}
	return data[:i]
}

// readRecords reads every record with its line number; a line the CSV reader refuses is a
// rejection, and the lines after it are still read. Blank lines are skipped.
func readRecords(data []byte, delim rune) (records [][]string, lines []int, bad []Rejection) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma, r.FieldsPerRecord, r.LazyQuotes = delim, -1, true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return records, lines, bad
		}
		if pe, ok := errors.AsType[*csv.ParseError](err); ok {
			bad = append(bad, Rejection{Line: pe.StartLine, Reason: "not a well-formed CSV line: " + pe.Err.Error()})
			continue
		}
		if err != nil {
			bad = append(bad, Rejection{Line: 0, Reason: err.Error()})
			return records, lines, bad
		}
		line, _ := r.FieldPos(0)
		blank := true
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
			if rec[i] != "" {
				blank = false
			}
		}
		if !blank {
			records, lines = append(records, rec), append(lines, line)
		}
	}
}

// detectLayout finds the columns from a header line, or, without one, from the values.
func detectLayout(records [][]string) (layout, bool, error) {
	head := records[0]
	if lay, ok := headerLayout(head); ok {
		return lay, true, nil
	}
	lay, err := valueLayout(records[:min(len(records), 20)], len(head))
	if err != nil {
		return lay, false, err
	}
	header := looksDate.FindString(field(head, lay.date)) == ""
	return lay, header, nil
}

// headerLayout reads the columns from their names; ok when a date and an amount (or a debit
// or credit) column are named. An amount column wins over debit and credit.
func headerLayout(head []string) (layout, bool) {
	lay := layout{date: -1, amount: -1, debit: -1, credit: -1, balance: -1}
	for i, h := range head {
		name := strings.ToLower(strings.Trim(h, " \"'"))
		switch role := roleOf(name); role {
		case "date":
			if lay.date < 0 {
				lay.date = i
			}
		case "amount":
			if lay.amount < 0 {
				lay.amount = i
			}
		case "debit":
			lay.debit = i
		case "credit":
			lay.credit = i
		case "balance":
			lay.balance = i
		case "description":
			lay.desc = append(lay.desc, i)
		}
	}
	if lay.date < 0 || lay.amount < 0 && lay.debit < 0 && lay.credit < 0 {
		return lay, false
	}
	if lay.amount >= 0 {
		lay.debit, lay.credit = -1, -1
	}
	return lay, true
}

// valueLayout finds the columns of a statement without a header from a sample of its rows:
// the first column whose values look like dates, the numeric columns after it (the amount,
// and the last one the balance), the text columns the description.
func valueLayout(sample [][]string, width int) (layout, error) {
	lay := layout{date: -1, amount: -1, debit: -1, credit: -1, balance: -1}
	var numeric []int
	for c := range width {
		dates, nums, texts := columnKinds(sample, c)
		switch {
		case dates*2 > len(sample) && lay.date < 0:
			lay.date = c
		case nums*2 > len(sample):
			numeric = append(numeric, c)
		case texts > 0:
			lay.desc = append(lay.desc, c)
		}
	}
	if lay.date < 0 || len(numeric) == 0 {
		return lay, steward.Errorf(steward.CodeInvalid,
			"could not find the date and amount columns: give the statement a header line (date, description, amount or debit/credit, balance)")
	}
	lay.amount = numeric[0]
	if len(numeric) > 1 {
		lay.balance = numeric[len(numeric)-1]
	}
	return lay, nil
}

// columnKinds counts the values of column c that look like dates, amounts and text.
func columnKinds(sample [][]string, c int) (dates, nums, texts int) {
	for _, r := range sample {
		s := field(r, c)
		switch {
		case s == "":
		case looksDate.MatchString(s):
			dates++
		case looksAmount.MatchString(s):
			nums++
		default:
			texts++
		}
	}
	return dates, nums, texts
}

var (
	looksDate   = regexp.MustCompile(`^(\d{4}[-/]\d{1,2}[-/]\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2} [A-Za-z]{3} \d{4})$`)
	looksAmount = regexp.MustCompile(`^[-+(]?\s*[^\d\s-]{0,3}\s*-?[\d.,' ]*\d[)]?\s*-?$`)
)

func roleOf(name string) string {
	for _, role := range []string{"date", "amount", "debit", "credit", "balance", "description"} {
		for _, w := range headerWords[role] {
			if name == w {
				return role
			}
		}
	}
	for _, role := range []string{"date", "balance", "debit", "credit", "amount", "description"} {
		for _, w := range headerWords[role] {
			if len(w) > 3 && strings.Contains(name, w) {
				return role
			}
		}
	}
	return ""
}

func field(r []string, i int) string {
	if i < 0 || i >= len(r) {
		return ""
	}
	return r[i]
}

// chooseDateLayout returns the layout of name, or the one layout that reads every date of
// the column; two that both do (03/04/2026) is ambiguous and the caller must say which.
func chooseDateLayout(dates []string, name string) (string, error) {
	if name != "" {
		for _, f := range dateFormats {
			if strings.EqualFold(f.name, name) {
				return f.layout, nil
			}
		}
		return "", steward.Errorf(steward.CodeInvalid, "unknown date_format %q; use one of %s", name, strings.Join(DateFormats(), ", "))
	}
	var fits []string
	best, bestN := "", 0
	for _, f := range dateFormats {
		n := 0
		for _, d := range dates {
			if _, err := time.Parse(f.layout, d); err == nil {
				n++
			}
		}
		if n == len(dates) {
			fits = append(fits, f.name)
		}
		if n > bestN {
			best, bestN = f.layout, n
		}
	}
	switch {
	case len(fits) > 1:
		return "", steward.Errorf(steward.CodeInvalid, "the dates fit more than one format (%s); pass date_format", strings.Join(fits, ", "))
	case len(fits) == 1:
		for _, f := range dateFormats {
			if f.name == fits[0] {
				return f.layout, nil
			}
		}
	}
	if bestN == 0 {
		return "", steward.Errorf(steward.CodeInvalid, "could not read the dates; pass date_format (one of %s)", strings.Join(DateFormats(), ", "))
	}
	return best, nil // the format most dates have; the others are rejected line by line
}

// decimalComma reports whether the amounts write their decimals after a comma (1.234,56).
func decimalComma(amounts []string) bool {
	comma, point := 0, 0
	for _, a := range amounts {
		a = strings.TrimRight(a, " )-")
		i := strings.LastIndexAny(a, ".,")
		if i < 0 || len(a)-i-1 > 2 {
			continue // no decimals, or a thousands separator
		}
		if a[i] == ',' {
			comma++
		} else {
			point++
		}
	}
	return comma > point
}

// toRow reads one record.
func toRow(r []string, lay layout, dateLayout string, comma bool) (Row, error) {
	var row Row
	ds := field(r, lay.date)
	d, err := time.Parse(dateLayout, ds)
	if err != nil {
		return row, fmt.Errorf("date %q is not a date in the statement's format", clip(ds))
	}
	row.Date = d
	switch {
	case lay.amount >= 0:
		s := field(r, lay.amount)
		if s == "" {
			return row, errors.New("the amount is empty")
		}
		if row.AmountMinor, err = parseMinor(s, comma); err != nil {
			return row, err
		}
	default:
		debit, credit := field(r, lay.debit), field(r, lay.credit)
		if (debit == "") == (credit == "") {
			return row, errors.New("exactly one of debit and credit must be filled")
		}
		if debit != "" {
			v, err := parseMinor(debit, comma)
			if err != nil {
				return row, err
			}
			row.AmountMinor = -abs(v)
		} else {
			v, err := parseMinor(credit, comma)
			if err != nil {
				return row, err
			}
			row.AmountMinor = abs(v)
		}
	}
	if row.AmountMinor == 0 {
		return row, errors.New("the amount is zero")
	}
	if s := field(r, lay.balance); s != "" {
		if b, err := parseMinor(s, comma); err == nil {
			row.BalanceMinor = &b
		}
	}
	var parts []string
	for _, c := range lay.desc {
		if s := field(r, c); s != "" {
			parts = append(parts, s)
		}
	}
	row.Description = strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	if row.Description == "" {
		return row, errors.New("the description is empty")
	}
	return row, nil
}

// amountRune keeps the digits, signs and separators of an amount, drops spaces, currency
// signs and codes, and turns anything else into '?' (which fails the parse).
func amountRune(r rune) rune {
	switch {
	case r >= '0' && r <= '9', r == '-', r == '+', r == '.', r == ',':
		return r
	case r == ' ' || r == '\'' || r == '\u00a0' || r == '€' || r == '$' || r == '£' || r == '¥' || (r >= 'A' && r <= 'Z'):
		return -1
	}
	return '?'
}

// parseMinor reads an amount into integer minor units (cents) without floating point:
// a sign (-, +, trailing -, parentheses), currency symbols, thousands separators and
// the decimal mark (comma when comma is true). More than two decimals is an error.
func parseMinor(s string, comma bool) (int64, error) {
	orig := s
	neg := false
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		neg, s = true, s[1:len(s)-1]
	}
	if strings.HasSuffix(s, "-") {
		neg, s = true, strings.TrimSpace(s[:len(s)-1])
	}
	s = strings.Map(amountRune, s)
	if strings.HasPrefix(s, "-") {
		neg, s = !neg, s[1:]
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	dec, thou := ".", ","
	if comma {
		dec, thou = ",", "."
	}
	s = strings.ReplaceAll(s, thou, "")
	whole, frac, _ := strings.Cut(s, dec)
	if whole == "" && frac == "" || strings.ContainsAny(whole+frac, "?-+.,") || len(frac) > 2 || len(whole) > 15 {
		return 0, fmt.Errorf("amount %q is not a number with at most two decimals", clip(orig))
	}
	for len(frac) < 2 {
		frac += "0"
	}
	var v int64
	for _, c := range whole + frac {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// clip shortens a hostile value quoted in a rejection reason.
func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

func sortRejections(r []Rejection) {
	slices.SortStableFunc(r, func(a, b Rejection) int { return a.Line - b.Line })
}
