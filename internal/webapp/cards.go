package webapp

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// How a tool call reads on a page (docs/ARCHITECTURE.md §1, webapp): its one-line summaries
// (tools.Registry.SayCall and SayResult) lead, the arguments of a call waiting for approval
// are labelled fields, and the raw JSON is behind a disclosure. Every value goes in through
// page.text (escaped), its invisible characters shown (steward.Visible).

// words is the registry the pages word tool calls with; nil words every call generically.
func (a *web) words() *tools.Registry {
	if a.d.Runner == nil {
		return nil
	}
	return a.d.Runner.Tools
}

// maxFields is how many arguments a card lists as fields; the rest are in the exact JSON.
const maxFields = 12

// fields writes a call's arguments as labelled fields, in the order they were stored: the
// label from the argument's name, the value formatted — the tool's money arguments as one
// amount with its currency, dates readable, text as it is with its invisible characters
// shown, lists and objects as compact JSON.
func fields(p *page, reg *tools.Registry, tool string, args json.RawMessage) {
	names, values := ordered(args)
	if len(names) == 0 {
		return
	}
	var money *tools.MoneyArgs
	if reg != nil {
		if t, ok := reg.Get(tool); ok {
			money = t.Money
		}
	}
	p.raw(`<dl class="fields">`)
	shown := 0
	for i, name := range names {
		if money != nil && name == money.Currency {
			continue // shown with the amount
		}
		if shown == maxFields {
			p.raw(`<div><dt>More</dt><dd>in the exact arguments below</dd></div>`)
			break
		}
		shown++
		label, value := labelOf(name), valueOf(values[i])
		if money != nil && name == money.Amount {
			var minor int64
			var currency string
			for j, n := range names {
				if n == money.Currency {
					_ = json.Unmarshal(values[j], &currency)
				}
			}
			if json.Unmarshal(values[i], &minor) == nil && currency != "" {
				label, value = "Amount", tools.Money(minor, tools.Clip(currency, 3))
			}
		}
		p.raw(`<div><dt>`).text(label).raw(`</dt><dd>`).text(steward.Visible(value)).raw(`</dd></div>`)
	}
	p.raw(`</dl>`)
}

// ordered reads a JSON object's members in their order; anything else has none.
func ordered(args json.RawMessage) (names []string, values []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(args))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return nil, nil
		}
		names, values = append(names, name), append(values, v)
	}
	return names, values
}

// labelOf is an argument's name as a label: "transaction_ids" is "Transaction ids".
func labelOf(name string) string {
	s := strings.TrimSpace(strings.ReplaceAll(name, "_", " "))
	if s == "" {
		return name
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// valueOf is an argument's value as a field shows it.
func valueOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return tools.Day(s)
		}
		if _, err := time.Parse(time.RFC3339, s); err == nil {
			return tools.Day(s)
		}
		if s == "" {
			return "(empty)"
		}
		return s
	}
	switch string(v) {
	case "true":
		return "yes"
	case "false":
		return "no"
	case "null":
		return "(none)"
	}
	var compact bytes.Buffer
	if json.Compact(&compact, v) == nil {
		return compact.String()
	}
	return string(v)
}

// verdict is how a call that waited came out, as a card says it: a class (approved, denied,
// expired), a word in bold and the rest ("Approved" "by you · 10:42 UTC · “fine”").
type verdict struct {
	Class string `json:"class"`
	Label string `json:"label"`
	Words string `json:"words"`
}

// verdictOf words a person's decision.
func verdictOf(d activity.Decision, now time.Time) verdict {
	v := verdict{Class: "approved", Label: "Approved", Words: "by " + d.By}
	if !d.Approved {
		v.Class, v.Label = "denied", "Denied"
	}
	if !d.At.IsZero() {
		v.Words += " · " + clock(d.At, now)
	}
	if d.Message != "" {
		v.Words += " · “" + steward.Visible(d.Message) + "”"
	}
	return v
}

// expired is the verdict of a call nobody decided in time.
var expired = verdict{Class: "expired", Label: "Expired", Words: "nobody decided in time, so nothing ran"}

// clock is when something happened today ("10:42 UTC"), or on another day (when).
func clock(t, now time.Time) string {
	if t.UTC().Format(time.DateOnly) == now.UTC().Format(time.DateOnly) {
		return t.UTC().Format("15:04 UTC")
	}
	return when(t)
}

// decisionNote writes a verdict on a call, without buttons (app.js writes the same markup from
// a turn's settled event).
func decisionNote(p *page, v verdict) {
	p.raw(`<p class="decision `).text(v.Class).raw(`" role="note"><strong>`).text(v.Label).raw(`</strong> `).text(v.Words).raw(`</p>`)
}

// settled words how each pending call of a turn that no longer waits for this owner came out:
// a person's decision, else expired, else stopped (a cancelled turn), else decided elsewhere
// (e.g. by a household member's refusal the journal words alone). Nil while the turn still
// waits for the owner's decision.
func settled(v steward.View, ds map[string]activity.Decision, now time.Time) map[string]verdict {
	waiting := v.Status == steward.StatusSuspended && v.Awaiting == "" && (v.ExpiresAt == nil || now.Before(*v.ExpiresAt))
	if waiting {
		return nil
	}
	out := map[string]verdict{}
	for id, d := range ds {
		out[id] = verdictOf(d, now)
	}
	fallback := verdict{Class: "approved", Label: "Decided", Words: "elsewhere"}
	switch {
	case v.Status == steward.StatusExpired || (v.Status == steward.StatusSuspended && v.Awaiting == ""):
		fallback = expired
	case v.Status == steward.StatusCancelled:
		fallback = verdict{Class: "denied", Label: "Stopped", Words: "the turn was stopped, so nothing ran"}
	case v.Awaiting != "":
		// The owner's vote is in (a turn awaits members only after it); the members' are not.
		fallback = verdict{Class: "approved", Label: "Approved", Words: "by you; the turn is " + v.Awaiting}
	}
	out["*"] = fallback
	return out
}
