package script

import (
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	starjson "go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/stewardhq/steward/internal/steward"
)

// The JSON builtins the runner itself calls.
var (
	jsonEncode = starjson.Module.Members["encode"]
	jsonDecode = starjson.Module.Members["decode"]
	csvDictsFn = starlark.NewBuiltin("csv.dicts", csvDicts)
)

// library is what every run finds predeclared besides Starlark's builtins: math, json,
// statistics, dates, money, csv, sum and group_by. None reaches a file, the network, the
// environment or the clock.
func library() starlark.StringDict {
	return starlark.StringDict{
		"math":       starmath.Module,
		"json":       starjson.Module,
		"sum":        starlark.NewBuiltin("sum", sum),
		"group_by":   starlark.NewBuiltin("group_by", groupBy),
		"statistics": module("statistics", map[string]builtinFunc{"mean": mean, "median": median, "stdev": stdev}),
		"dates": module("dates", map[string]builtinFunc{"parse": dateParse, "format": dateFormat,
			"add_days": addDays, "days_between": daysBetween, "weekday": weekday, "month": month}),
		"money": module("money", map[string]builtinFunc{"minor": moneyMinor, "format": moneyFormat}),
		"csv":   module("csv", map[string]builtinFunc{"rows": csvRows, "dicts": csvDicts}),
	}
}

type builtinFunc = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

func module(name string, fns map[string]builtinFunc) *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: name, Members: starlark.StringDict{}}
	for n, f := range fns {
		m.Members[n] = starlark.NewBuiltin(name+"."+n, f)
	}
	return m
}

// sum(iterable, start=0) adds numbers.
func sum(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "iterable", &it, "start?", &acc); err != nil {
		return nil, err
	}
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		var err error
		if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
	}
	return acc, nil
}

// groupBy(items, key) is a dict from each key to the items that have it, in first-seen order;
// key is a function of an item or the name of a field of dict items.
func groupBy(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var key starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "items", &it, "key", &key); err != nil {
		return nil, err
	}
	out := starlark.NewDict(0)
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		var k starlark.Value
		var err error
		switch kf := key.(type) {
		case starlark.String:
			m, ok := x.(starlark.Mapping)
			if !ok {
				return nil, fmt.Errorf("%s: key %s names a field, but an item is a %s, not a dict", b.Name(), kf, x.Type())
			}
			k, _, err = m.Get(kf)
			if k == nil && err == nil {
				k = starlark.None
			}
		case starlark.Callable:
			k, err = starlark.Call(thread, kf, starlark.Tuple{x}, nil)
		default:
			return nil, fmt.Errorf("%s: key must be a function or a field name, not %s", b.Name(), key.Type())
		}
		if err != nil {
			return nil, err
		}
		group, found, err := out.Get(k)
		if err != nil {
			return nil, err
		}
		if !found {
			group = starlark.NewList(nil)
			if err := out.SetKey(k, group); err != nil {
				return nil, err
			}
		}
		if err := group.(*starlark.List).Append(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// numbers unpacks one iterable of numbers as float64s.
func numbers(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) ([]float64, error) {
	var it starlark.Iterable
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &it); err != nil {
		return nil, err
	}
	var xs []float64
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		f, ok := starlark.AsFloat(x)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a number", b.Name(), x.Type())
		}
		xs = append(xs, f)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: no numbers", b.Name())
	}
	return xs, nil
}

func meanOf(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func mean(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	xs, err := numbers(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.Float(meanOf(xs)), nil
}

func median(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	xs, err := numbers(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return starlark.Float(xs[n/2]), nil
	}
	return starlark.Float((xs[n/2-1] + xs[n/2]) / 2), nil
}

// stdev is the sample standard deviation (n-1), as Python's statistics.stdev.
func stdev(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	xs, err := numbers(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if len(xs) < 2 {
		return nil, fmt.Errorf("%s: needs at least two numbers", b.Name())
	}
	m, ss := meanOf(xs), 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return starlark.Float(math.Sqrt(ss / float64(len(xs)-1))), nil
}

// Dates are strings "YYYY-MM-DD"; formats are strftime's (%Y %m %d %y %b %B %a %A %H %M %S %%).
var strftime = strings.NewReplacer("%Y", "2006", "%m", "01", "%d", "02", "%y", "06", "%b", "Jan", "%B", "January",
	"%a", "Mon", "%A", "Monday", "%H", "15", "%M", "04", "%S", "05", "%%", "%")

func day(b *starlark.Builtin, s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return t, fmt.Errorf("%s: %q is not a date YYYY-MM-DD", b.Name(), s)
	}
	return t, nil
}

// dateParse(text, format="%Y-%m-%d") is the date text written in format, as YYYY-MM-DD.
func dateParse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	format := "%Y-%m-%d"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "format?", &format); err != nil {
		return nil, err
	}
	t, err := time.Parse(strftime.Replace(format), strings.TrimSpace(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %q does not match %q", b.Name(), text, format)
	}
	return starlark.String(t.Format(time.DateOnly)), nil
}

// dateFormat(date, format) writes a YYYY-MM-DD date in format.
func dateFormat(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d, format string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "date", &d, "format", &format); err != nil {
		return nil, err
	}
	t, err := day(b, d)
	if err != nil {
		return nil, err
	}
	return starlark.String(t.Format(strftime.Replace(format))), nil
}

func addDays(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d string
	var n int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "date", &d, "days", &n); err != nil {
		return nil, err
	}
	t, err := day(b, d)
	if err != nil {
		return nil, err
	}
	return starlark.String(t.AddDate(0, 0, n).Format(time.DateOnly)), nil
}

// daysBetween(a, b) is b minus a in days.
func daysBetween(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var from, to string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &from, "b", &to); err != nil {
		return nil, err
	}
	f, err := day(b, from)
	if err != nil {
		return nil, err
	}
	t, err := day(b, to)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt(int(t.Sub(f).Hours() / 24)), nil
}

func weekday(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "date", &d); err != nil {
		return nil, err
	}
	t, err := day(b, d)
	if err != nil {
		return nil, err
	}
	return starlark.String(t.Weekday().String()), nil
}

// month(date) is the date's month, YYYY-MM.
func month(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "date", &d); err != nil {
		return nil, err
	}
	t, err := day(b, d)
	if err != nil {
		return nil, err
	}
	return starlark.String(t.Format("2006-01")), nil
}

// moneyMinor(text, digits=2) is a decimal amount ("12.34", "-1,200.5") in integer minor units,
// exactly (no float rounding).
func moneyMinor(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	digits := 2
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "digits?", &digits); err != nil {
		return nil, err
	}
	s := strings.ReplaceAll(strings.TrimSpace(text), ",", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if digits < 0 || digits > 4 || len(frac) > digits || whole == "" && frac == "" {
		return nil, fmt.Errorf("%s: %q is not an amount with at most %d decimals", b.Name(), text, digits)
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", digits-len(frac)), 10, 64)
	if err != nil || strings.ContainsAny(whole+frac, "+-") {
		return nil, fmt.Errorf("%s: %q is not an amount", b.Name(), text)
	}
	if neg {
		n = -n
	}
	return starlark.MakeInt64(n), nil
}

// moneyFormat(minor, currency) is an amount in minor units as a person reads it: "12.34 EUR".
func moneyFormat(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var minor int64
	var currency string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "minor", &minor, "currency", &currency); err != nil {
		return nil, err
	}
	return starlark.String(steward.FormatMoney(minor, strings.ToUpper(currency))), nil
}

// csvRows(text) is the rows of a CSV text, each a list of strings.
func csvRows(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	rows, err := readCSV(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(rows))
	for i, r := range rows {
		cells := make([]starlark.Value, len(r))
		for j, c := range r {
			cells[j] = starlark.String(c)
		}
		out[i] = starlark.NewList(cells)
	}
	return starlark.NewList(out), nil
}

// csvDicts(text) is the rows after the first, each a dict from the first row's names.
func csvDicts(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	rows, err := readCSV(b, args, kwargs)
	if err != nil || len(rows) == 0 {
		return starlark.NewList(nil), err
	}
	out := make([]starlark.Value, 0, len(rows)-1)
	for _, r := range rows[1:] {
		d := starlark.NewDict(len(rows[0]))
		for j, name := range rows[0] {
			v := ""
			if j < len(r) {
				v = r[j]
			}
			if err := d.SetKey(starlark.String(name), starlark.String(v)); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return starlark.NewList(out), nil
}

func readCSV(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) ([][]string, error) {
	var text string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text); err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord, r.LazyQuotes, r.TrimLeadingSpace = -1, true, true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return rows, nil
}
