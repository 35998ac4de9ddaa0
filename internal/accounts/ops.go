package accounts

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/calendar"
	smail "github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/steward"
)

// The owner's mail and calendar as the tools (internal/tools/mailtools) and the briefings
// use them: each call opens the account in a short transaction of its own, then speaks to
// the server outside any (docs/ARCHITECTURE.md §2: no I/O inside a transaction).

// SearchMail lists the owner's messages matching q.
func (s *Service) SearchMail(ctx context.Context, ownerID uuid.UUID, q steward.MailQuery) ([]steward.MailSummary, error) {
	return withMail(ctx, s, ownerID, func(a smail.Account) ([]steward.MailSummary, error) { return s.Mail.Search(ctx, a, q) })
}

// ReadMail opens one of the owner's messages.
func (s *Service) ReadMail(ctx context.Context, ownerID uuid.UUID, id string) (steward.MailMessage, error) {
	return withMail(ctx, s, ownerID, func(a smail.Account) (steward.MailMessage, error) { return s.Mail.Read(ctx, a, id) })
}

// MailAttachment returns an attachment of one of the owner's messages, at most max bytes.
func (s *Service) MailAttachment(ctx context.Context, ownerID uuid.UUID, id, name string, max int64) (steward.MailFile, error) {
	return withMail(ctx, s, ownerID, func(a smail.Account) (steward.MailFile, error) { return s.Mail.AttachmentFile(ctx, a, id, name, max) })
}

// SendMail sends out from the owner's account; with invite, the calendar event of that id
// rides along as an invitation (invite.ics, METHOD:REQUEST).
func (s *Service) SendMail(ctx context.Context, ownerID uuid.UUID, out steward.OutgoingMail, invite string) (steward.SentMail, error) {
	if invite != "" {
		ics, err := withCalendar(ctx, s, ownerID, func(a calendar.Account) ([]byte, error) { return s.Calendar.ICS(ctx, a, invite) })
		if err != nil {
			return steward.SentMail{}, err
		}
		out.Attachments = append(out.Attachments, steward.MailFile{Name: "invite.ics", ContentType: "text/calendar; method=REQUEST; charset=utf-8", Data: ics})
	}
	return withMail(ctx, s, ownerID, func(a smail.Account) (steward.SentMail, error) { return s.Mail.Send(ctx, a, out, s.Now.Now()) })
}

// MoveMail moves one of the owner's messages to a folder.
func (s *Service) MoveMail(ctx context.Context, ownerID uuid.UUID, id, folder string) (string, error) {
	return withMail(ctx, s, ownerID, func(a smail.Account) (string, error) { return s.Mail.Move(ctx, a, id, folder) })
}

// FlagMail sets or clears a flag of one of the owner's messages.
func (s *Service) FlagMail(ctx context.Context, ownerID uuid.UUID, id, flag string) error {
	_, err := withMail(ctx, s, ownerID, func(a smail.Account) (struct{}, error) { return struct{}{}, s.Mail.Flag(ctx, a, id, flag) })
	return err
}

// Zone is the owner's time zone: the calendar account's, else UTC.
func (s *Service) Zone(ctx context.Context, ownerID uuid.UUID) (*time.Location, error) {
	var a calendar.Account
	if _, err := s.open(ctx, ownerID, Calendar, &a); err != nil {
		return time.UTC, err
	}
	return a.Location(), nil
}

// Events lists the occurrences of the owner's events overlapping [from, to).
func (s *Service) Events(ctx context.Context, ownerID uuid.UUID, from, to time.Time) ([]steward.CalendarEvent, error) {
	return withCalendar(ctx, s, ownerID, func(a calendar.Account) ([]steward.CalendarEvent, error) { return s.Calendar.List(ctx, a, from, to) })
}

// CreateEvent adds an event to the owner's calendar.
func (s *Service) CreateEvent(ctx context.Context, ownerID uuid.UUID, d steward.EventDraft) (steward.CalendarEvent, error) {
	return withCalendar(ctx, s, ownerID, func(a calendar.Account) (steward.CalendarEvent, error) {
		return s.Calendar.Create(ctx, a, d, s.Now.Now())
	})
}

// UpdateEvent changes an event of the owner's calendar if it is still at etag.
func (s *Service) UpdateEvent(ctx context.Context, ownerID uuid.UUID, id, etag string, d steward.EventDraft) (steward.CalendarEvent, error) {
	e, err := withCalendar(ctx, s, ownerID, func(a calendar.Account) (steward.CalendarEvent, error) { return s.Calendar.Update(ctx, a, id, etag, d) })
	return e, calendar.ErrorOf(err, id)
}

// DeleteEvent removes an event of the owner's calendar if it is still at etag.
func (s *Service) DeleteEvent(ctx context.Context, ownerID uuid.UUID, id, etag string) error {
	_, err := withCalendar(ctx, s, ownerID, func(a calendar.Account) (struct{}, error) { return struct{}{}, s.Calendar.Delete(ctx, a, id, etag) })
	return calendar.ErrorOf(err, id)
}
