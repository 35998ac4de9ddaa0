// Package mailtools is the mail and calendar toolset (docs/MAIL.md): search_mail, read_mail,
// list_events and find_free_time (reads) and send_mail, move_mail, flag_mail,
// save_attachment, create_event, update_event and delete_event (writes), over the owner's
// accounts (internal/accounts, through the Mail and Calendar ports). Every tool's output is a
// stranger's text: Untrusted, it taints the turn, so a send afterwards always asks the owner
// (docs/ARCHITECTURE.md §3). Every write leaves Postgres: External, journaled executing
// before it runs, run once, never on an "always" rule.
package mailtools

import (
	"context"
	"errors"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// Mail is the owner's mail account (internal/accounts.Service implements it).
type Mail interface {
	SearchMail(ctx context.Context, ownerID uuid.UUID, q steward.MailQuery) ([]steward.MailSummary, error)
	ReadMail(ctx context.Context, ownerID uuid.UUID, id string) (steward.MailMessage, error)
	MailAttachment(ctx context.Context, ownerID uuid.UUID, id, name string, max int64) (steward.MailFile, error)
	SendMail(ctx context.Context, ownerID uuid.UUID, out steward.OutgoingMail, inviteEventID string) (steward.SentMail, error)
	MoveMail(ctx context.Context, ownerID uuid.UUID, id, folder string) (string, error)
	FlagMail(ctx context.Context, ownerID uuid.UUID, id, flag string) error
}

// Calendar is the owner's calendar account (internal/accounts.Service implements it).
type Calendar interface {
	Zone(ctx context.Context, ownerID uuid.UUID) (*time.Location, error)
	Events(ctx context.Context, ownerID uuid.UUID, from, to time.Time) ([]steward.CalendarEvent, error)
	CreateEvent(ctx context.Context, ownerID uuid.UUID, d steward.EventDraft) (steward.CalendarEvent, error)
	UpdateEvent(ctx context.Context, ownerID uuid.UUID, id, etag string, d steward.EventDraft) (steward.CalendarEvent, error)
	DeleteEvent(ctx context.Context, ownerID uuid.UUID, id, etag string) error
}

// Documents stores an attachment as a document, through the same extractors and limits as
// an upload (internal/document.Service implements it).
type Documents interface {
	Upload(ctx context.Context, ownerID uuid.UUID, name, contentType string, data []byte) (steward.Document, error)
	Limit() int64
}

// Accounts is both ports: the service behind them.
type Accounts interface {
	Mail
	Calendar
}

// Tools returns the mail and calendar tools over a (the owner's accounts) and docs.
func Tools(a Accounts, docs Documents) []tools.Tool {
	out := []tools.Tool{searchMailTool(a), readMailTool(a), listEventsTool(a), findFreeTimeTool(a),
		sendMailTool(a), moveMailTool(a), flagMailTool(a), saveAttachmentTool(a, docs),
		createEventTool(a), updateEventTool(a), deleteEventTool(a)}
	for i := range out {
		// What a mail or calendar server says is a stranger's text (docs/ARCHITECTURE.md §3).
		out[i].Untrusted = true
		if out[i].Kind == steward.KindWrite {
			out[i].External = true
		}
	}
	// An attachment saved is a row: an undo deletes it.
	out[7].Reversible = true
	return out
}

// searchMailArgs are the arguments of search_mail.
type searchMailArgs struct {
	Query  string `json:"query,omitempty" jsonschema:"words to find in the subject, sender or text; empty for every message"`
	Folder string `json:"folder,omitempty" jsonschema:"the folder (default INBOX)"`
	Since  string `json:"since,omitempty" jsonschema:"only messages from this day on (YYYY-MM-DD)"`
	Unread bool   `json:"unread,omitempty" jsonschema:"only unread messages"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the most messages to return, newest first (default 10, at most 50)"`

	since time.Time
}

// Check trims and bounds the arguments.
func (a *searchMailArgs) Check() error {
	a.Query, a.Folder, a.Since = strings.TrimSpace(a.Query), strings.TrimSpace(a.Folder), strings.TrimSpace(a.Since)
	if err := tools.CheckLength("query", a.Query, 0, 200); err != nil {
		return err
	}
	if err := tools.CheckLength("folder", a.Folder, 0, 200); err != nil {
		return err
	}
	if a.Since != "" {
		t, err := time.Parse(time.DateOnly, a.Since)
		if err != nil {
			return tools.ArgErrorf("since", "%s is not a day (YYYY-MM-DD)", tools.QuoteValue(a.Since))
		}
		a.since = t
	}
	return tools.OrDefaultIn("limit", &a.Limit, steward.MailDefaultLimit, steward.MailMaxLimit)
}

func searchMailTool(m Mail) tools.Tool {
	return tools.Say(tools.New("search_mail",
		"Search the owner's mail: the newest messages matching query (sender, subject, date, unread, a snippet of the text), "+
			"each with its id for read_mail, move_mail, flag_mail and send_mail's reply_to_id.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a searchMailArgs) (any, error) {
			found, err := m.SearchMail(ctx, env.OwnerID, steward.MailQuery{Text: a.Query, Folder: a.Folder, Since: a.since, Unread: a.Unread, Limit: a.Limit})
			if err != nil {
				return nil, tools.ServiceError(ctx, "query", err)
			}
			return map[string]any{"messages": found}, nil
		}), saySearchMail, saidSearchMail)
}

func saySearchMail(a searchMailArgs) string {
	s := "Search mail"
	if q := strings.TrimSpace(a.Query); q != "" {
		s += " for " + tools.Quote(q)
	}
	if a.Unread {
		s += ", unread only"
	}
	if f := strings.TrimSpace(a.Folder); f != "" && f != "INBOX" {
		s += " in " + tools.Quote(f)
	}
	return s
}

func saidSearchMail(_ searchMailArgs, o struct {
	Messages []struct{} `json:"messages"`
}) string {
	return "Found " + tools.Count(len(o.Messages), "message")
}

// idArgs name one message.
type readMailArgs struct {
	ID string `json:"id" jsonschema:"the message's id, as search_mail returns it (FOLDER:UID)"`
}

func checkMessageID(id *string) error {
	*id = strings.TrimSpace(*id)
	if err := tools.CheckLength("id", *id, 1, 300); err != nil {
		return err
	}
	if _, _, err := steward.ParseMailID(*id); err != nil {
		return tools.ArgErrorf("id", "%s", err.Error())
	}
	return nil
}

// Check checks the id.
func (a *readMailArgs) Check() error { return checkMessageID(&a.ID) }

func readMailTool(m Mail) tools.Tool {
	return tools.Say(tools.New("read_mail",
		"Read one of the owner's messages: sender, recipients, date, subject, its text (an HTML body made text) "+
			"and the names of its attachments (save_attachment stores one as a document).",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a readMailArgs) (any, error) {
			msg, err := m.ReadMail(ctx, env.OwnerID, a.ID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return msg, nil
		}), func(readMailArgs) string { return "Read a message" }, saidReadMail)
}

func saidReadMail(_ readMailArgs, o struct {
	From    string `json:"from"`
	Subject string `json:"subject"`
}) string {
	s := "Read " + tools.Quote(o.Subject)
	if o.From != "" {
		s += " from " + tools.Clip(o.From, 60)
	}
	return s
}

// sendMailArgs are the arguments of send_mail.
type sendMailArgs struct {
	To            []string `json:"to" jsonschema:"the recipients' addresses"`
	Cc            []string `json:"cc,omitempty" jsonschema:"addresses to copy"`
	Subject       string   `json:"subject,omitempty" jsonschema:"the subject (for a reply: default the original's, with Re:)"`
	Body          string   `json:"body" jsonschema:"the message's text"`
	ReplyToID     string   `json:"reply_to_id,omitempty" jsonschema:"the id of the message this answers (search_mail): it is threaded on it"`
	InviteEventID string   `json:"invite_event_id,omitempty" jsonschema:"the id of a calendar event (list_events) to attach as an invitation (.ics)"`
}

// Check checks the addresses, the lengths and that a subject or a reply is given.
func (a *sendMailArgs) Check() error {
	a.Subject, a.ReplyToID, a.InviteEventID = strings.TrimSpace(a.Subject), strings.TrimSpace(a.ReplyToID), strings.TrimSpace(a.InviteEventID)
	if len(a.To) == 0 || len(a.To)+len(a.Cc) > 20 {
		return tools.ArgErrorf("to", "give 1 to 20 recipients (to and cc together)")
	}
	for _, list := range []struct {
		field string
		addrs []string
	}{{"to", a.To}, {"cc", a.Cc}} {
		for i, s := range list.addrs {
			list.addrs[i] = strings.TrimSpace(s)
			if _, err := mail.ParseAddress(list.addrs[i]); err != nil || len(s) > 320 {
				return tools.ArgErrorf(list.field, "%s is not a mail address", tools.QuoteValue(s))
			}
		}
	}
	if a.Subject == "" && a.ReplyToID == "" {
		return tools.ArgErrorf("subject", "give a subject (or reply_to_id, whose subject a reply takes)")
	}
	if err := tools.CheckLength("subject", a.Subject, 0, 300); err != nil {
		return err
	}
	if strings.ContainsAny(a.Subject, "\r\n") {
		return tools.ArgErrorf("subject", "must be one line")
	}
	if err := tools.CheckLength("body", a.Body, 1, 100000); err != nil {
		return err
	}
	if a.ReplyToID != "" {
		if err := checkMessageID(&a.ReplyToID); err != nil {
			return err
		}
	}
	return tools.CheckLength("invite_event_id", a.InviteEventID, 0, 1000)
}

func sendMailTool(m Mail) tools.Tool {
	return tools.WithPreview(tools.Say(tools.New("send_mail",
		"Send a mail from the owner's account (asks the owner first). With reply_to_id it is a reply, threaded on that "+
			"message; with invite_event_id it carries that event as an invitation.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a sendMailArgs) (any, error) {
			sent, err := m.SendMail(ctx, env.OwnerID, steward.OutgoingMail{To: a.To, Cc: a.Cc, Subject: a.Subject, Body: a.Body, ReplyTo: a.ReplyToID}, a.InviteEventID)
			if err != nil {
				return nil, tools.ServiceError(ctx, "to", err)
			}
			return map[string]any{"sent": sent}, nil
		}), saySendMail, saidSendMail), previewSendMail)
}

// saySendMail words a send with its recipients first (the addresses it goes to, each name
// apart), then its subject: a long subject never hides where the mail goes.
func saySendMail(a sendMailArgs) string {
	s := "Send mail"
	if a.ReplyToID != "" {
		s = "Reply"
	}
	s += " to " + recipients(a.To)
	if len(a.Cc) > 0 {
		s += ", cc " + recipients(a.Cc)
	}
	if subj := strings.TrimSpace(a.Subject); subj != "" {
		s += ": " + tools.Quote(subj)
	}
	if a.InviteEventID != "" {
		s += ", with an invitation"
	}
	return s
}

// previewSendMail is the card's warning when a recipient's name looks like an address other
// than the one the mail goes to (`"boss@company.example" <attacker@evil.example>`), one line
// each; "" when none does.
func previewSendMail(_ context.Context, _ tools.Env, a sendMailArgs) (string, error) {
	var lines []string
	for _, s := range slices.Concat(a.To, a.Cc) {
		addr, err := mail.ParseAddress(s)
		if err != nil {
			continue
		}
		for _, other := range addressLike.FindAllString(addr.Name, -1) {
			if !strings.EqualFold(other, addr.Address) {
				lines = append(lines, "Warning: the name "+tools.Quote(addr.Name)+" is not the address this mail goes to: "+addr.Address)
				break
			}
		}
	}
	return strings.Join(lines, "\n"), nil
}

// addressLike finds what reads as a mail address in a name.
var addressLike = regexp.MustCompile(`[^\s<>"'(),;:@]+@[^\s<>"'(),;:@]+\.[^\s<>"'(),;:@]+`)

// recipients words a list of addresses: the first two and how many more.
func recipients(list []string) string {
	if len(list) == 0 {
		return "nobody"
	}
	shown := make([]string, min(2, len(list)))
	for i := range shown {
		shown[i] = recipient(list[i])
	}
	s := strings.Join(shown, ", ")
	if len(list) > 2 {
		s += " and " + tools.Count(len(list)-2, "other")
	}
	return s
}

// recipient words one address as the mail goes to it, its name apart:
// `"Boss" <x@evil.example>` is x@evil.example (“Boss”).
func recipient(s string) string {
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	switch {
	case err != nil:
		return tools.Clip(strings.TrimSpace(s), 60)
	case a.Name == "" || strings.EqualFold(a.Name, a.Address):
		return tools.Clip(a.Address, 60)
	}
	return tools.Clip(a.Address, 60) + " (“" + tools.Clip(a.Name, 30) + "”)"
}

func saidSendMail(a sendMailArgs, o struct {
	Sent struct {
		Subject   string   `json:"subject"`
		To        []string `json:"to"`
		NotCopied string   `json:"not_copied"`
	} `json:"sent"`
}) string {
	s := "Sent " + tools.Quote(o.Sent.Subject) + " to " + recipients(o.Sent.To)
	if o.Sent.NotCopied != "" {
		s += " (not copied to the Sent folder)"
	}
	return s
}

// moveMailArgs are the arguments of move_mail.
type moveMailArgs struct {
	ID     string `json:"id" jsonschema:"the message's id (search_mail)"`
	Folder string `json:"folder" jsonschema:"the folder to move it to, e.g. Archive"`
}

// Check checks the id and the folder.
func (a *moveMailArgs) Check() error {
	a.Folder = strings.TrimSpace(a.Folder)
	if err := checkMessageID(&a.ID); err != nil {
		return err
	}
	return tools.CheckLength("folder", a.Folder, 1, 200)
}

func moveMailTool(m Mail) tools.Tool {
	return tools.Say(tools.New("move_mail",
		"Move one of the owner's messages to another folder (asks the owner first).",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a moveMailArgs) (any, error) {
			newID, err := m.MoveMail(ctx, env.OwnerID, a.ID, a.Folder)
			if err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			out := map[string]any{"moved": a.ID, "folder": a.Folder}
			if newID != "" {
				out["new_id"] = newID
			}
			return out, nil
		}), sayMoveMail, func(a moveMailArgs, _ struct{}) string { return "Moved the message to " + tools.Quote(a.Folder) })
}

func sayMoveMail(a moveMailArgs) string {
	return "Move message " + tools.Clip(a.ID, 40) + " to " + tools.Quote(a.Folder)
}

// flagMailArgs are the arguments of flag_mail.
type flagMailArgs struct {
	ID   string `json:"id" jsonschema:"the message's id (search_mail)"`
	Flag string `json:"flag" enum:"seen,unseen,flagged,unflagged,answered" jsonschema:"what to mark the message"`
}

// Check checks the id.
func (a *flagMailArgs) Check() error { return checkMessageID(&a.ID) }

func flagMailTool(m Mail) tools.Tool {
	return tools.Say(tools.New("flag_mail",
		"Mark one of the owner's messages seen, unseen, flagged, unflagged or answered (asks the owner first).",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a flagMailArgs) (any, error) {
			if err := m.FlagMail(ctx, env.OwnerID, a.ID, a.Flag); err != nil {
				return nil, tools.ServiceError(ctx, "id", err)
			}
			return map[string]any{"id": a.ID, "flag": a.Flag}, nil
		}), sayFlagMail, func(a flagMailArgs, _ struct{}) string { return "Marked the message " + cmpOr(a.Flag, "flagged") })
}

func sayFlagMail(a flagMailArgs) string {
	return "Mark message " + tools.Clip(a.ID, 40) + " " + cmpOr(a.Flag, "flagged")
}

// saveAttachmentArgs are the arguments of save_attachment.
type saveAttachmentArgs struct {
	ID   string `json:"id" jsonschema:"the message's id (search_mail)"`
	Name string `json:"name,omitempty" jsonschema:"the attachment's name as read_mail lists it (default: the only one)"`
}

// Check checks the id and the name.
func (a *saveAttachmentArgs) Check() error {
	a.Name = strings.TrimSpace(a.Name)
	if err := checkMessageID(&a.ID); err != nil {
		return err
	}
	return tools.CheckLength("name", a.Name, 0, 255)
}

func saveAttachmentTool(m Mail, docs Documents) tools.Tool {
	return tools.Say(tools.New("save_attachment",
		"Store an attachment of one of the owner's messages as a document (PDF, DOCX, XLSX, CSV, text, HTML), "+
			"read like an upload; asks the owner first.",
		steward.KindWrite,
		func(ctx context.Context, env tools.Env, a saveAttachmentArgs) (any, error) {
			if docs == nil {
				return nil, errors.New("save_attachment has no document store")
			}
			f, err := m.MailAttachment(ctx, env.OwnerID, a.ID, a.Name, docs.Limit())
			if err != nil {
				return nil, tools.ServiceError(ctx, "name", err)
			}
			doc, err := docs.Upload(ctx, env.OwnerID, f.Name, f.ContentType, f.Data)
			if err != nil {
				return nil, tools.ServiceError(ctx, "name", err)
			}
			env.UndoWith(steward.Inverse{Op: steward.UndoDeleteDocument, ID: doc.ID})
			return map[string]any{"document": doc}, nil
		}), saySaveAttachment, saidSaveAttachment)
}

func saySaveAttachment(a saveAttachmentArgs) string {
	if n := strings.TrimSpace(a.Name); n != "" {
		return "Save the attachment " + tools.Quote(n) + " as a document"
	}
	return "Save a mail attachment as a document"
}

func saidSaveAttachment(_ saveAttachmentArgs, o struct {
	Document struct {
		Name string `json:"name"`
	} `json:"document"`
}) string {
	return "Saved " + tools.Quote(o.Document.Name)
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
