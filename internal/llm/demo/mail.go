package demo

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// The mail and calendar phrasings (docs/MAIL.md): "any new mail", "what's on my calendar
// today" (or tomorrow), "send … to ADDRESS" and "send an email to ADDRESS saying …".

// mailQuestions map whole messages (lower case, no end punctuation) to a call.
var mailQuestions = map[string]intent{
	"any new mail":                    mailIntent("search_mail", `{"unread":true}`),
	"any new mails":                   mailIntent("search_mail", `{"unread":true}`),
	"any new email":                   mailIntent("search_mail", `{"unread":true}`),
	"do i have new mail":              mailIntent("search_mail", `{"unread":true}`),
	"check my mail":                   mailIntent("search_mail", `{"unread":true}`),
	"new mail":                        mailIntent("search_mail", `{"unread":true}`),
	"show my mail":                    mailIntent("search_mail", `{}`),
	"what's on my calendar today":     mailIntent("list_events", `{"from":"today"}`),
	"whats on my calendar today":      mailIntent("list_events", `{"from":"today"}`),
	"what is on my calendar today":    mailIntent("list_events", `{"from":"today"}`),
	"what's on today":                 mailIntent("list_events", `{"from":"today"}`),
	"what's on my calendar":           mailIntent("list_events", `{"from":"today"}`),
	"what's on my calendar tomorrow":  mailIntent("list_events", `{"from":"tomorrow"}`),
	"whats on my calendar tomorrow":   mailIntent("list_events", `{"from":"tomorrow"}`),
	"what is on my calendar tomorrow": mailIntent("list_events", `{"from":"tomorrow"}`),
	"what's on tomorrow":              mailIntent("list_events", `{"from":"tomorrow"}`),
}

func mailIntent(tool, args string) intent {
	return intent{tool: tool, args: []json.RawMessage{json.RawMessage(args)}}
}

var (
	sendSaying = regexp.MustCompile(`(?i)^send (?:an? )?(?:e-?mail|mail|message|note) to (\S+@\S+?) (?:saying|that says|with)[: ]+(.+)$`)
	sendTo     = regexp.MustCompile(`(?i)^send (.+) to (\S+@\S+)$`)
)

// parseMail recognises a mail or calendar phrasing in s (already cleaned).
func parseMail(s string) (intent, bool) {
	key := strings.ToLower(strings.ReplaceAll(s, "’", "'"))
	if in, ok := mailQuestions[key]; ok {
		return in, true
	}
	var to, body string
	if m := sendSaying.FindStringSubmatch(s); m != nil {
		to, body = m[1], m[2]
	} else if m := sendTo.FindStringSubmatch(s); m != nil {
		body, to = m[1], m[2]
	} else {
		return intent{}, false
	}
	body = strings.Trim(body, `"'“”‘’ `)
	if _, err := mail.ParseAddress(to); err != nil || body == "" {
		return intent{}, false
	}
	subject := body
	if r := []rune(subject); len(r) > 60 {
		subject = string(r[:59]) + "…"
	}
	args, _ := json.Marshal(map[string]any{"to": []string{to}, "subject": subject, "body": body})
	return intent{tool: "send_mail", args: []json.RawMessage{args}}, true
}

// mailList words search_mail's output: the messages, newest first.
func mailList(out any, args map[string]any) string {
	items, _ := field(out, "messages").([]any)
	unread, _ := args["unread"].(bool)
	if len(items) == 0 {
		if unread {
			return "No new mail."
		}
		return "No messages found."
	}
	var b strings.Builder
	if unread {
		fmt.Fprintf(&b, "You have %d new %s:", len(items), plural(len(items), "message", "messages"))
	} else {
		fmt.Fprintf(&b, "%d %s:", len(items), plural(len(items), "message", "messages"))
	}
	for _, it := range items {
		line := "\n- " + stringField(it, "from") + " — " + orDash(stringField(it, "subject"))
		if d, err := time.Parse(time.RFC3339, stringField(it, "date")); err == nil {
			line += " (" + d.Format("2 Jan 15:04") + ")"
		}
		if urgent, _ := field(it, "marked_urgent").(bool); urgent {
			line += " [urgent]"
		}
		b.WriteString(line)
	}
	return b.String()
}

// eventList words list_events' output: each occurrence with its time in the owner's zone.
func eventList(out any, args map[string]any) string {
	day := "today"
	if f, _ := args["from"].(string); f != "" {
		day = f
	}
	items, _ := field(out, "events").([]any)
	if len(items) == 0 {
		return "Nothing on your calendar " + dayWords(day) + "."
	}
	var b strings.Builder
	b.WriteString("On your calendar " + dayWords(day) + ":")
	for _, it := range items {
		b.WriteString("\n- " + eventTime(it) + " " + orDash(stringField(it, "title")))
		if loc := stringField(it, "location"); loc != "" {
			b.WriteString(" (" + loc + ")")
		}
		if note := stringField(it, "note"); note != "" {
			b.WriteString(" — " + note)
		}
	}
	return b.String()
}

// eventTime is an occurrence's time as its own offset gives it: "09:00–09:30", or "all day".
func eventTime(it any) string {
	if allDay, _ := field(it, "all_day").(bool); allDay {
		return "all day"
	}
	start, err1 := time.Parse(time.RFC3339, stringField(it, "start"))
	end, err2 := time.Parse(time.RFC3339, stringField(it, "end"))
	if err1 != nil || err2 != nil {
		return stringField(it, "start")
	}
	return start.Format("15:04") + "–" + end.Format("15:04")
}

func dayWords(day string) string {
	switch day {
	case "today", "tomorrow":
		return day
	}
	return "on " + day
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no subject)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
