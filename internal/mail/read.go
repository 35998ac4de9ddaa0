package mail

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomessage "github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // the charsets of messages not in UTF-8
	"github.com/emersion/go-message/mail"

	"github.com/stewardhq/steward/internal/doctext"
	"github.com/stewardhq/steward/internal/steward"
)

// Caps on what a message may make Steward read (docs/MAIL.md).
const (
	// MaxMessageBytes is the largest message read_mail opens.
	MaxMessageBytes = 50 << 20
	// maxTextPart and maxHTMLPart bound the body parts kept; MaxBodyChars the text returned.
	maxTextPart  = 1 << 20
	maxHTMLPart  = 4 << 20
	MaxBodyChars = 20000
)

// fetchWhole streams message id's bytes into fn (at most MaxMessageBytes).
func fetchWhole(s *session, id string, fn func(m *imapMessage) error) error {
	folder, uid, err := ParseID(id)
	if err != nil {
		return steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	if err := selectFolder(s, folder, true); err != nil {
		return err
	}
	sizes, err := s.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if len(sizes) == 0 {
		return steward.Errorf(steward.CodeNotFound, "there is no message %s (it may have been moved or deleted; search again)", id)
	}
	if sizes[0].RFC822Size > MaxMessageBytes {
		return steward.Errorf(steward.CodeInvalid, "message %s is %d MB; Steward opens messages up to %d MB", id, sizes[0].RFC822Size>>20, MaxMessageBytes>>20)
	}
	cmd := s.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Envelope: true, Flags: true, InternalDate: true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}}})
	defer cmd.Close()
	msg := cmd.Next()
	if msg == nil {
		return steward.Errorf(steward.CodeNotFound, "there is no message %s", id)
	}
	m := &imapMessage{folder: folder}
	for item := msg.Next(); item != nil; item = msg.Next() {
		switch it := item.(type) {
		case imapclient.FetchItemDataUID:
			m.uid = it.UID
		case imapclient.FetchItemDataEnvelope:
			m.env = it.Envelope
		case imapclient.FetchItemDataFlags:
			m.flags = it.Flags
		case imapclient.FetchItemDataInternalDate:
			m.date = it.Time
		case imapclient.FetchItemDataBodySection:
			if it.Literal == nil {
				continue
			}
			m.body = io.LimitReader(it.Literal, MaxMessageBytes)
			if err := fn(m); err != nil {
				return err
			}
			m.done = true
		}
	}
	if !m.done {
		return steward.Errorf(steward.CodeNotFound, "the server sent no body for message %s", id)
	}
	return cmd.Close()
}

// imapMessage is one fetched message as it streams.
type imapMessage struct {
	folder string
	uid    imap.UID
	env    *imap.Envelope
	flags  []imap.Flag
	date   time.Time
	body   io.Reader
	done   bool
}

// Read opens message id: its headers, the text of its body and its attachments' names.
// An HTML-only body is made text by internal/doctext (sandboxed, bounded).
func (c *Client) Read(ctx context.Context, a Account, id string) (steward.MailMessage, error) {
	var out steward.MailMessage
	var html []byte
	err := c.with(ctx, a, func(ctx context.Context, s *session) error {
		return fetchWhole(s, id, func(m *imapMessage) error {
			var err error
			out, html, err = parse(m)
			return err
		})
	})
	if err != nil {
		return steward.MailMessage{}, err
	}
	if strings.TrimSpace(out.Text) == "" && len(html) > 0 {
		ex, err := doctext.Extract(ctx, doctext.Source{Name: "message.html", ContentType: "text/html; charset=utf-8", Data: html})
		if err != nil {
			out.Text = "(the message's HTML body could not be read: " + err.Error() + ")"
		} else {
			out.Text, out.FromHTML = ex.Text(), true
		}
	}
	out.Text, out.Truncated = cut(out.Text, MaxBodyChars)
	return out, nil
}

// parse reads a streamed message: its first text/plain part, else its first text/html part,
// and the names and sizes of its attachments (their bytes are counted, never kept).
func parse(m *imapMessage) (steward.MailMessage, []byte, error) {
	out := steward.MailMessage{Attachments: []steward.MailAttachment{}}
	out.MailSummary = steward.MailSummary{ID: ID(m.folder, m.uid), Folder: m.folder, Date: m.date}
	out.Unread = !contains(m.flags, imap.FlagSeen)
	out.Flagged = contains(m.flags, imap.FlagFlagged)
	r, err := newPartReader(m.body, MaxParts)
	if err != nil && r == nil {
		return steward.MailMessage{}, nil, steward.Errorf(steward.CodeInvalid, "message %s cannot be read as MIME: %v", out.ID, err)
	}
	headers(&out, r.Header)
	var html []byte
	for p, ok := r.next(); ok; p, ok = r.next() {
		switch ph := p.Header.(type) {
		case *mail.InlineHeader:
			ct, _, _ := ph.ContentType()
			switch {
			case ct == "text/plain" && out.Text == "":
				b, _ := io.ReadAll(io.LimitReader(p.Body, maxTextPart))
				out.Text = strings.ToValidUTF8(string(b), "\uFFFD")
			case ct == "text/html" && html == nil:
				html, _ = io.ReadAll(io.LimitReader(p.Body, maxHTMLPart))
			default:
				if name := partName(ph.Header); name != "" {
					n, _ := io.Copy(io.Discard, p.Body)
					out.Attachments = append(out.Attachments, steward.MailAttachment{Name: name, ContentType: ct, Size: n})
				}
			}
		case *mail.AttachmentHeader:
			name, _ := ph.Filename()
			ct, _, _ := ph.ContentType()
			n, _ := io.Copy(io.Discard, p.Body)
			out.Attachments = append(out.Attachments, steward.MailAttachment{Name: cmpOr(name, "attachment"), ContentType: ct, Size: n})
		}
	}
	out.PartsSkipped = r.cut
	return out, html, nil
}

// headers fills in what a message's header says.
func headers(out *steward.MailMessage, h mail.Header) {
	out.Subject, _ = h.Subject()
	out.From = headerAddresses(h, "From")
	out.To = headerAddresses(h, "To")
	out.Cc = headerAddresses(h, "Cc")
	if d, err := h.Date(); err == nil {
		out.Date = d
	}
	out.MessageID, _ = h.MessageID()
	out.References, _ = h.MsgIDList("References")
	out.Urgent = urgent(h.Header)
}

// AttachmentFile returns the attachment called name of message id (the first one when name
// is empty and there is one), at most max bytes.
func (c *Client) AttachmentFile(ctx context.Context, a Account, id, name string, max int64) (steward.MailFile, error) {
	var f steward.MailFile
	var names []string
	err := c.with(ctx, a, func(ctx context.Context, s *session) error {
		return fetchWhole(s, id, func(m *imapMessage) error {
			var err error
			f, names, err = attachment(m.body, id, name, max)
			return err
		})
	})
	if err != nil {
		return steward.MailFile{}, err
	}
	if f.Name == "" {
		if len(names) == 0 {
			return steward.MailFile{}, steward.Errorf(steward.CodeNotFound, "message %s has no attachment", id)
		}
		return steward.MailFile{}, steward.Errorf(steward.CodeNotFound, "message %s has no attachment named %q; its attachments: %s", id, name, strings.Join(names, ", "))
	}
	return f, nil
}

// attachment reads message id's parts for the attachment called name (the first one when
// name is empty): its bytes, at most max, and the names of every attachment.
func attachment(body io.Reader, id, name string, max int64) (steward.MailFile, []string, error) {
	var f steward.MailFile
	var names []string
	r, err := newPartReader(body, MaxParts)
	if err != nil && r == nil {
		return f, nil, steward.Errorf(steward.CodeInvalid, "message %s cannot be read as MIME: %v", id, err)
	}
	for p, ok := r.next(); ok; p, ok = r.next() {
		got, ct := fileOf(p)
		if got == "" {
			continue
		}
		names = append(names, got)
		if (name != "" && got != name) || f.Name != "" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p.Body, max+1))
		if err != nil {
			return f, names, steward.Errorf(steward.CodeInvalid, "attachment %q of message %s cannot be read: %v", got, id, err)
		}
		if int64(len(data)) > max {
			return f, names, steward.Errorf(steward.CodeTooLarge, "attachment %q is larger than %d bytes, the largest document Steward keeps", got, max)
		}
		f = steward.MailFile{Name: got, ContentType: ct, Data: data}
	}
	return f, names, nil
}

// fileOf is a part's file name ("" when it is not a file) and content type.
func fileOf(p *mail.Part) (name, contentType string) {
	switch ph := p.Header.(type) {
	case *mail.AttachmentHeader:
		name, _ = ph.Filename()
		contentType, _, _ = ph.ContentType()
	case *mail.InlineHeader:
		name = partName(ph.Header)
		contentType, _, _ = ph.ContentType()
	}
	return name, contentType
}

// partName is an inline part's file name (Content-Disposition's filename, else
// Content-Type's name), "" for none.
func partName(h gomessage.Header) string {
	if _, params, err := h.ContentDisposition(); err == nil && params["filename"] != "" {
		return params["filename"]
	}
	if _, params, err := h.ContentType(); err == nil && params["name"] != "" {
		return params["name"]
	}
	return ""
}

// headerAddresses words an address header: "Name <a@b>, c@d"; an unparsable one as it is.
func headerAddresses(h mail.Header, key string) string {
	list, err := h.AddressList(key)
	if err != nil {
		v, _ := h.Text(key)
		return v
	}
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Address
		if a.Name != "" {
			parts[i] = a.Name + " <" + a.Address + ">"
		}
	}
	return strings.Join(parts, ", ")
}

// urgent reads the sender's own urgency marking.
func urgent(h gomessage.Header) bool {
	imp := strings.ToLower(h.Get("Importance"))
	prio := strings.TrimSpace(h.Get("X-Priority"))
	return imp == "high" || strings.HasPrefix(prio, "1") || strings.HasPrefix(prio, "2")
}

// snippetOf is the start of a message's text (from its first bytes) and its urgency marking.
func snippetOf(head []byte) (string, bool) {
	r, err := newPartReader(bytes.NewReader(head), 20)
	if err != nil && r == nil {
		return "", false
	}
	isUrgent := urgent(r.Header.Header)
	for p, ok := r.next(); ok; p, ok = r.next() {
		ih, inline := p.Header.(*mail.InlineHeader)
		if !inline {
			continue
		}
		if ct, _, _ := ih.ContentType(); ct != "text/plain" {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(p.Body, 4096))
		s, _ := cut(strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "")), " "), snippetChars)
		return s, isUrgent
	}
	return "", isUrgent
}

// cut cuts s to at most n characters.
func cut(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	return string([]rune(s)[:n]), true
}

func contains(flags []imap.Flag, f imap.Flag) bool {
	for _, x := range flags {
		if strings.EqualFold(string(x), string(f)) {
			return true
		}
	}
	return false
}
