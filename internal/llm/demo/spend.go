package demo

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"
)

// spendQuestion is "how much did I spend on SUBJECT [PERIOD]": the one ledger phrasing the
// demo understands. The subject is matched against the report's categories, then merchants.
type spendQuestion struct {
	subject string
	// period is "" (all the records), "this month", "last month", "this year", "last year",
	// or a month ("march").
	period string
}

var spendPrefixes = []string{"how much did i spend on", "how much have i spent on", "what did i spend on"}

var months = map[string]time.Month{}

func init() {
	for m := time.January; m <= time.December; m++ {
		months[strings.ToLower(m.String())] = m
	}
}

// parseSpend recognises a spending question in s (already cleaned).
func parseSpend(s string) (spendQuestion, bool) {
	lower := strings.ToLower(s)
	for _, p := range spendPrefixes {
		if !strings.HasPrefix(lower, p+" ") {
			continue
		}
		rest := strings.TrimSpace(lower[len(p):])
		q := spendQuestion{subject: rest}
		for _, suffix := range []string{"this month", "last month", "this year", "last year", "in total", "so far"} {
			if r, ok := strings.CutSuffix(rest, " "+suffix); ok {
				q = spendQuestion{subject: strings.TrimSpace(r), period: suffix}
				break
			}
		}
		if i := strings.LastIndex(rest, " in "); q.period == "" && i >= 0 {
			if _, ok := months[rest[i+len(" in "):]]; ok {
				q = spendQuestion{subject: strings.TrimSpace(rest[:i]), period: rest[i+len(" in "):]}
			}
		}
		if q.period == "in total" || q.period == "so far" {
			q.period = ""
		}
		q.subject = strings.Trim(q.subject, `"'“”‘’ `)
		if q.subject == "" {
			return spendQuestion{}, false
		}
		return q, true
	}
	return spendQuestion{}, false
}

// allTime is the first day of a report over all the records.
const allTime = "1000-01-01"

// dates is the question's first and last day (YYYY-MM-DD, both included) as of now.
func (q spendQuestion) dates(now time.Time) (from, to string) {
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	y, m, _ := now.Date()
	month := func(y int, m time.Month) (string, string) {
		first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return day(first), day(first.AddDate(0, 1, -1))
	}
	switch q.period {
	case "this month":
		return day(time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)), day(now)
	case "last month":
		return month(y, m-1) // time.Date normalises month 0 to December of the year before
	case "this year":
		return fmt.Sprintf("%d-01-01", y), day(now)
	case "last year":
		return fmt.Sprintf("%d-01-01", y-1), fmt.Sprintf("%d-12-31", y-1)
	case "":
		return allTime, day(now)
	}
	// A month by name: the latest one that has begun.
	named := months[q.period]
	if named > m {
		y--
	}
	return month(y, named)
}

// report is the part of ledger_report's output the answer reads.
type report struct {
	From  string `json:"from"`
	To    string `json:"to"`
	By    string `json:"by"`
	Lines []struct {
		Key      string `json:"key"`
		Currency string `json:"currency"`
		Count    int    `json:"count"`
		OutMinor int64  `json:"out_minor"`
		Out      string `json:"out"`
	} `json:"lines"`
}

// spendAnswer answers a spending question from its ledger_report results (by category and by
// merchant): the category the subject names, else the merchants it names, else what was spent
// most on. ok is false when results hold no readable report.
func spendAnswer(results []steward.ToolResult, msgs []steward.Message) (string, bool) {
	q, asked := spendAsked(msgs)
	byKind := map[string]report{}
	for _, r := range results {
		if r.Name != "ledger_report" || r.IsError {
			continue
		}
		var rep report
		if b, err := json.Marshal(decode(r.Output)); err != nil || json.Unmarshal(b, &rep) != nil || rep.By == "" {
			continue
		}
		byKind[rep.By] = rep
	}
	cat, ok := byKind["category"]
	if !ok || !asked {
		return "", false
	}
	when := "between " + cat.From + " and " + cat.To
	if cat.From == allTime {
		when = "in all your records up to " + cat.To
	}
	for _, rep := range []report{cat, byKind["merchant"]} {
		var found []string
		for _, l := range rep.Lines {
			if l.OutMinor > 0 && names(l.Key, q.subject) {
				found = append(found, fmt.Sprintf("%s on %s (%s)", l.Out, l.Key, payments(l.Count)))
			}
		}
		if len(found) > 0 {
			return fmt.Sprintf("You spent %s %s.", strings.Join(found, ", "), when), true
		}
	}
	var top []string
	for _, l := range cat.Lines {
		if l.OutMinor > 0 && len(top) < 5 {
			top = append(top, fmt.Sprintf("%s %s", l.Key, l.Out))
		}
	}
	if len(top) == 0 {
		return fmt.Sprintf("I found no spending at all %s.", when), true
	}
	return fmt.Sprintf("I found no spending on “%s” %s. What you spent most on: %s.", q.subject, when, strings.Join(top, ", ")), true
}

// spendAsked finds the spending question among the owner's messages, latest first.
func spendAsked(msgs []steward.Message) (spendQuestion, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != steward.RoleUser {
			continue
		}
		if text := msgs[i].Text(); text != "" {
			return parseSpend(clean(text))
		}
	}
	return spendQuestion{}, false
}

// names says whether a report key (a category or merchant) is what subject names:
// case-insensitively, either containing the other, a plural's "s" ignored.
func names(key, subject string) bool {
	k := strings.ToLower(key)
	s := strings.TrimSuffix(subject, "s")
	return len(s) >= 2 && (strings.Contains(k, s) || strings.Contains(s, k))
}

func payments(n int) string {
	if n == 1 {
		return "1 payment"
	}
	return fmt.Sprintf("%d payments", n)
}
