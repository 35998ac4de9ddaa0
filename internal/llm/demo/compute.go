package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// computePrefixes start a request the demo answers with run_code.
var computePrefixes = []string{"compute", "calculate", "work out"}

var (
	// arithmetic is an expression of numbers and operators only: run as it is.
	arithmetic = regexp.MustCompile(`^[0-9.\s+\-*/%()]+$`)
	// statistic is "the average of 3, 5 and 10".
	statistic = regexp.MustCompile(`^(?:the )?(average|mean|median|sum|total|standard deviation) of (.+)$`)
	// number is one number of a list.
	number = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)
	// spending is "my average monthly spending on groceries" (per week or month; on is optional).
	spending = regexp.MustCompile(`^(?:my )?average (weekly|monthly) spend(?:ing)?(?: on (.+))?$`)
)

// statisticCode is the Starlark of each statistic over a list xs.
var statisticCode = map[string]string{
	"average": "statistics.mean(%s)", "mean": "statistics.mean(%s)", "median": "statistics.median(%s)",
	"sum": "sum(%s)", "total": "sum(%s)", "standard deviation": "statistics.stdev(%s)",
}

// spendingCode groups the money out of the ledger rows tx by week or month (the period), among
// the rows whose category or merchant contains the subject, and averages the groups.
const spendingCode = `subject, period = %q, %q
out = [t for t in tx if t["amount_minor"] < 0 and (subject in t["category"].lower() or subject in t["merchant"].lower())]
days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
def key(t):
    if period == "month":
        return dates.month(t["date"])
    return dates.add_days(t["date"], -days.index(dates.weekday(t["date"])))
totals = [-sum([t["amount_minor"] for t in v]) for v in group_by(out, key).values()]
currency = out[0]["currency"] if out else "EUR"
average = int(statistics.mean(totals)) if totals else 0
result = "%%s a %%s on average, over %%d %%ss with spending" %% (money.format(average, currency), period, len(totals), period)
`

// parseCompute recognises a computation in s (already cleaned) and words it as run_code's
// arguments.
func parseCompute(s string) (json.RawMessage, bool) {
	lower := strings.ToLower(s)
	var rest string
	for _, p := range computePrefixes {
		if r, ok := strings.CutPrefix(lower, p+" "); ok {
			rest = strings.TrimSpace(r)
			break
		}
	}
	if rest == "" {
		return nil, false
	}
	args := map[string]any{}
	switch {
	case arithmetic.MatchString(rest):
		args["code"] = rest
	case spending.MatchString(rest):
		m := spending.FindStringSubmatch(rest)
		args["code"] = fmt.Sprintf(spendingCode, strings.TrimSuffix(strings.TrimSpace(m[2]), "s"), map[string]string{"weekly": "week", "monthly": "month"}[m[1]])
		args["inputs"] = []map[string]any{{"name": "tx", "ledger": map[string]any{}}}
	case statistic.MatchString(rest):
		m := statistic.FindStringSubmatch(rest)
		xs := number.FindAllString(m[2], 1000)
		if len(xs) == 0 {
			return nil, false
		}
		args["code"] = fmt.Sprintf(statisticCode[m[1]], "["+strings.Join(xs, ", ")+"]")
	default:
		return nil, false
	}
	b, _ := json.Marshal(args) // strings and lists always marshal
	return b, true
}

// computeAnswer words run_code's output: its result, and what it printed.
func computeAnswer(out any) string {
	m, _ := out.(map[string]any)
	var parts []string
	if r, ok := m["result"]; ok && r != nil {
		parts = append(parts, "The result is "+render(r)+".")
	}
	if p := strings.TrimSpace(stringField(out, "printed")); p != "" {
		parts = append(parts, "It printed: "+p)
	}
	if len(parts) == 0 {
		return "The code ran and returned nothing."
	}
	return strings.Join(parts, " ")
}
