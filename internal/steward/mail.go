package steward

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The mail and calendar domain (docs/MAIL.md, docs/ARCHITECTURE.md §15): the values
// internal/mail and internal/calendar return, which internal/accounts serves and the toolset
// (tools/mailtools) and the jobs (internal/autonomy) use without importing the protocol
// clients.

// Bounds of what a mail search returns.
const (
	MailDefaultLimit = 10
	MailMaxLimit     = 50
)

// MailSummary is a message as a search lists it.
type MailSummary struct {
	ID      string    `json:"id"`
	Folder  string    `json:"folder"`
	From    string    `json:"from"`
	To      string    `json:"to,omitempty"`
	Subject string    `json:"subject"`
	Date    time.Time `json:"date"`
	Unread  bool      `json:"unread"`
	Flagged bool      `json:"flagged,omitempty"`
	Snippet string    `json:"snippet,omitempty"`
	// Urgent is the sender's own marking (Importance: high, X-Priority 1 or 2), for triage.
	Urgent bool `json:"marked_urgent,omitempty"`
}

// MailQuery is a search: words in the headers or body, a folder (INBOX by default), a day the
// messages arrived on or after, only unread ones, at most Limit (newest first).
type MailQuery struct {
	Text   string
	Folder string
	Since  time.Time
	After  time.Time // exact: only messages that arrived after it (the briefing's last run)
	Unread bool
	Limit  int
}

// ParseMailID splits a message's handle for the tools — its folder and IMAP UID, "INBOX:42"
// — into the two.
func ParseMailID(id string) (folder string, uid uint32, err error) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("%q is not a message id (FOLDER:UID, as search_mail returns it)", id)
	}
	n, err := strconv.ParseUint(id[i+1:], 10, 32)
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("%q is not a message id (FOLDER:UID, as search_mail returns it)", id)
	}
	return id[:i], uint32(n), nil
}

// MailAttachment is a part a message carries as a file.
type MailAttachment struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// MailMessage is a message as read_mail returns it: headers, the text of its body (HTML made
// text), its attachments' names.
type MailMessage struct {
	MailSummary
	Cc        string `json:"cc,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	// PartsSkipped says which parts were not read: nested too deep, or past the count read.
	PartsSkipped string           `json:"parts_skipped,omitempty"`
	FromHTML     bool             `json:"from_html,omitempty"`
	Attachments  []MailAttachment `json:"attachments"`
	// References are the Message-ID and References a reply threads on (not shown).
	References []string `json:"-"`
}

// MailFile is an attachment's bytes.
type MailFile struct {
	Name, ContentType string
	Data              []byte
}

// OutgoingMail is a message to send. ReplyTo, when set, is the id of the message it answers:
// its Message-ID becomes In-Reply-To, its References and Message-ID the References, and its
// subject (with "Re: ") the default subject.
type OutgoingMail struct {
	To, Cc      []string
	Subject     string
	Body        string
	ReplyTo     string
	Attachments []MailFile
}

// SentMail is what a send did.
type SentMail struct {
	MessageID  string   `json:"message_id"`
	To         []string `json:"to"`
	Cc         []string `json:"cc,omitempty"`
	Subject    string   `json:"subject"`
	InReplyTo  string   `json:"in_reply_to,omitempty"`
	References []string `json:"references,omitempty"`
	// CopiedTo is the folder a copy was put in (the account's Sent); NotCopied, when the
	// copy failed, says so and why: the mail was sent all the same.
	CopiedTo  string `json:"copied_to,omitempty"`
	NotCopied string `json:"not_copied,omitempty"`
}

// CalendarEvent is one occurrence of an event, its times in the owner's zone.
type CalendarEvent struct {
	// ID is the event's object (its path on the server); ETag its version, for a change.
	ID          string    `json:"id"`
	ETag        string    `json:"etag"`
	UID         string    `json:"uid"`
	Title       string    `json:"title"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	AllDay      bool      `json:"all_day,omitempty"`
	Location    string    `json:"location,omitempty"`
	Description string    `json:"description,omitempty"`
	// Recurring marks an occurrence of a series; a change applies to the whole series.
	Recurring bool `json:"recurring,omitempty"`
	// TooMany marks a series with more occurrences in the range than a listing takes, listed
	// once (at its first) with Note saying so.
	TooMany bool   `json:"too_many_to_list,omitempty"`
	Note    string `json:"note,omitempty"`
}

// EventDraft is an event to create, or the fields of a change (empty fields stay as they are).
type EventDraft struct {
	Title, Location, Description string
	Start, End                   time.Time
}

// FreeSlot is a free slot of a calendar.
type FreeSlot struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// FreeTime returns up to max slots of at least d within [from, to), inside the hours
// dayStart–dayEnd (minutes after midnight) of each day in loc, around the busy events (sorted
// by start). A series too dense to list (TooMany) is not counted: every minute of every day
// would be busy, and an invitation would block the owner's whole calendar (docs/MAIL.md).
func FreeTime(events []CalendarEvent, from, to time.Time, d time.Duration, dayStart, dayEnd int, loc *time.Location, max int) []FreeSlot {
	out := []FreeSlot{}
	day := time.Date(from.In(loc).Year(), from.In(loc).Month(), from.In(loc).Day(), 0, 0, 0, 0, loc)
	for ; day.Before(to) && len(out) < max; day = day.AddDate(0, 0, 1) {
		start := latest(from, day.Add(time.Duration(dayStart)*time.Minute))
		end := earliest(to, day.Add(time.Duration(dayEnd)*time.Minute))
		cur := start
		for _, e := range events {
			if e.TooMany || !e.End.After(cur) || !e.Start.Before(end) {
				continue
			}
			if e.Start.Sub(cur) >= d {
				out = append(out, FreeSlot{Start: cur, End: e.Start})
			}
			cur = latest(cur, e.End)
		}
		if end.Sub(cur) >= d && len(out) < max {
			out = append(out, FreeSlot{Start: cur, End: end})
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
