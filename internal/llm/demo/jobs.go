package demo

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The scheduled jobs, offline (docs/MAIL.md, "Briefings"): the demo model reads the job's
// data block and delivers a plain, correct listing with notify — the morning briefing and
// the weekly review always, the inbox scan only when a message is marked urgent (by its
// sender, or "urgent" in its subject) — so the jobs can be seen without a model.

const (
	briefingPrefix = "Scheduled job: morning briefing"
	scanPrefix     = "Scheduled job: inbox scan"
	reviewPrefix   = "Scheduled job: weekly review"
	maxNotify      = 2000
)

type jobItem struct {
	Title    string `json:"title"`
	From     string `json:"from"`
	Subject  string `json:"subject"`
	Start    string `json:"start"`
	End      string `json:"end"`
	AllDay   bool   `json:"all_day"`
	Location string `json:"location"`
	Note     string `json:"note"`
	Urgent   bool   `json:"marked_urgent"`
	Tool     string `json:"tool"`
}

type jobData struct {
	Date      string            `json:"date"`
	Events    []jobItem         `json:"events_today"`
	Mail      []jobItem         `json:"mail_since_last_briefing"`
	NewMail   []jobItem         `json:"new_unread_mail"`
	Overdue   []jobItem         `json:"overdue_tasks"`
	DueToday  []jobItem         `json:"due_today"`
	Open      []jobItem         `json:"open_tasks_without_due_date"`
	Approvals []jobItem         `json:"pending_approvals"`
	Sources   map[string]string `json:"sources"`
	Portfolio string            `json:"portfolio"`
}

// readJob reads a briefing's or a scan's data block.
func readJob(msg string) (jobData, bool) {
	var d jobData
	return d, readData(msg, &d)
}

// readData decodes a job message's data block into v.
func readData(msg string, v any) bool {
	i := strings.Index(msg, "<data source=")
	if i < 0 {
		return false
	}
	block := msg[i:]
	start, end := strings.Index(block, ">\n"), strings.LastIndex(block, "\n</data>")
	if start < 0 || end < start {
		return false
	}
	return json.Unmarshal([]byte(block[start+2:end]), v) == nil
}

// parseJob recognises a scheduled job's message: the notify call it makes, or (an inbox
// scan with nothing urgent) the answer without one.
func parseJob(msg string) (intent, string, bool) {
	switch {
	case strings.HasPrefix(msg, briefingPrefix):
		d, ok := readJob(msg)
		if !ok {
			return intent{}, "", false
		}
		return notifyIntent("Morning briefing", briefingText(d)), "", true
	case strings.HasPrefix(msg, reviewPrefix):
		var r weekData
		if !readData(msg, &r) {
			return intent{}, "", false
		}
		return notifyIntent("Weekly review", reviewText(r)), "", true
	case strings.HasPrefix(msg, scanPrefix):
		d, ok := readJob(msg)
		if !ok {
			return intent{}, "", false
		}
		var urgent []string
		for _, m := range d.NewMail {
			if m.Urgent || strings.Contains(strings.ToLower(m.Subject), "urgent") {
				urgent = append(urgent, "- "+m.From+" — "+orDash(m.Subject))
			}
		}
		if len(urgent) == 0 {
			return intent{}, fmt.Sprintf("Nothing urgent in %d new %s; no notification.", len(d.NewMail), plural(len(d.NewMail), "message", "messages")), true
		}
		return notifyIntent("Urgent mail", strings.Join(urgent, "\n")), "", true
	}
	return intent{}, "", false
}

func notifyIntent(title, text string) intent {
	if r := []rune(text); len(r) > maxNotify {
		text = string(r[:maxNotify-1]) + "…"
	}
	args, _ := json.Marshal(map[string]string{"title": title, "message": text})
	return intent{tool: "notify", args: []json.RawMessage{args}}
}

// briefingText is the morning briefing as a plain listing.
func briefingText(d jobData) string {
	var b strings.Builder
	b.WriteString(d.Date)
	section := func(title string, items []jobItem, line func(jobItem) string, source string) {
		if st := d.Sources[source]; source != "" && st != "connected" {
			fmt.Fprintf(&b, "\n\n%s: %s.", title, strings.TrimSpace(st))
			return
		}
		if len(items) == 0 {
			fmt.Fprintf(&b, "\n\n%s: none.", title)
			return
		}
		fmt.Fprintf(&b, "\n\n%s:", title)
		for _, it := range items {
			b.WriteString("\n- " + line(it))
		}
	}
	section("Today's events", d.Events, func(e jobItem) string {
		s := eventSpan(e) + " " + orDash(e.Title)
		if e.Location != "" {
			s += " (" + e.Location + ")"
		}
		if e.Note != "" {
			s += " — " + e.Note
		}
		return s
	}, "calendar")
	section("Mail since the last briefing", d.Mail, func(m jobItem) string {
		s := m.From + " — " + orDash(m.Subject)
		if m.Urgent {
			s += " [marked urgent]"
		}
		return s
	}, "mail")
	title := func(t jobItem) string { return t.Title }
	section("Overdue tasks", d.Overdue, title, "")
	section("Due today", d.DueToday, title, "")
	section("Open tasks", d.Open, title, "")
	if n := len(d.Approvals); n > 0 {
		fmt.Fprintf(&b, "\n\nWaiting for your approval: %d.", n)
	}
	if d.Portfolio != "" {
		b.WriteString("\n\nPortfolio: " + d.Portfolio)
	}
	return b.String()
}

func eventSpan(e jobItem) string {
	if e.AllDay {
		return "all day"
	}
	start, err1 := time.Parse(time.RFC3339, e.Start)
	end, err2 := time.Parse(time.RFC3339, e.End)
	if err1 != nil || err2 != nil {
		return e.Start
	}
	return start.Format("15:04") + "–" + end.Format("15:04")
}

// weekData is a weekly review's data block (autonomy's review).
type weekData struct {
	Week     string `json:"week"`
	Projects []struct {
		Name      string    `json:"name"`
		Open      []jobItem `json:"open_tasks"`
		Overdue   []jobItem `json:"overdue_tasks"`
		Completed []jobItem `json:"completed_this_week"`
	} `json:"projects"`
	Other     []jobItem         `json:"open_tasks_outside_projects"`
	Approvals []json.RawMessage `json:"pending_approvals"`
}

// reviewText is the weekly review as a plain listing: each project's work, then the rest.
func reviewText(r weekData) string {
	var b strings.Builder
	b.WriteString("Week ending " + r.Week)
	list := func(title string, items []jobItem) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:", title)
		for _, it := range items {
			b.WriteString("\n- " + it.Title)
		}
	}
	if len(r.Projects) == 0 {
		b.WriteString("\n\nNo projects in memory yet: tell me about one (\"remember that my project X …\") and it gets its own section.")
	}
	for _, p := range r.Projects {
		b.WriteString("\n\n" + p.Name)
		list("Done this week", p.Completed)
		list("Overdue", p.Overdue)
		list("Open", p.Open)
		if len(p.Completed)+len(p.Overdue)+len(p.Open) == 0 {
			b.WriteString("\nNo tasks mention it.")
		}
	}
	if len(r.Other) > 0 {
		b.WriteString("\n")
		list("Other open tasks", r.Other)
	}
	if n := len(r.Approvals); n > 0 {
		fmt.Fprintf(&b, "\n\nWaiting for your approval: %d.", n)
	}
	return b.String()
}
