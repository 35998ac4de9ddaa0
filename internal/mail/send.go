package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-smtp"

	"github.com/stewardhq/steward/internal/steward"
)

// Send writes out (threaded on the message it replies to) and sends it through a's SMTP
// server: STARTTLS or implicit TLS, plain only to an exempt address, PLAIN authentication.
// Once the server accepted it, a copy goes to the account's Sent folder (copyToSent); a copy
// that fails is said in the answer, never the send's failure.
func (c *Client) Send(ctx context.Context, a Account, out steward.OutgoingMail, now time.Time) (steward.SentMail, error) {
	sent := steward.SentMail{To: out.To, Cc: out.Cc, Subject: out.Subject}
	if out.ReplyTo != "" {
		orig, err := c.Read(ctx, a, out.ReplyTo)
		if err != nil {
			return steward.SentMail{}, err
		}
		if orig.MessageID != "" {
			sent.InReplyTo = orig.MessageID
			sent.References = append(append([]string{}, orig.References...), orig.MessageID)
		}
		if sent.Subject == "" {
			sent.Subject = orig.Subject
			if !strings.HasPrefix(strings.ToLower(sent.Subject), "re:") {
				sent.Subject = "Re: " + sent.Subject
			}
		}
	}
	sent.MessageID = newMessageID(a.From)
	body, err := compose(a, out, sent, now)
	if err != nil {
		return steward.SentMail{}, err
	}
	if err := c.submit(ctx, a, append(append([]string{}, out.To...), out.Cc...), body); err != nil {
		return steward.SentMail{}, err
	}
	if folder, err := c.copyToSent(ctx, a, body, now); err != nil {
		sent.NotCopied = "sent, but not copied to the Sent folder: " + message(err)
	} else {
		sent.CopiedTo = folder
	}
	return sent, nil
}

// copyToSent puts a sent message, read, in the account's Sent folder — the mailbox marked
// \Sent (RFC 6154), else the one called Sent — and returns the folder's name.
func (c *Client) copyToSent(ctx context.Context, a Account, body []byte, now time.Time) (string, error) {
	var folder string
	err := c.with(ctx, a, func(ctx context.Context, s *session) error {
		folder = sentFolder(s)
		cmd := s.Append(folder, int64(len(body)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: now})
		if _, err := cmd.Write(body); err != nil {
			_ = cmd.Close()
			return fmt.Errorf("append to %q: %w", folder, err)
		}
		if err := cmd.Close(); err != nil {
			return fmt.Errorf("append to %q: %w", folder, err)
		}
		if _, err := cmd.Wait(); err != nil {
			return fmt.Errorf("append to %q: %w", folder, err)
		}
		return nil
	})
	return folder, err
}

// sentFolder is the account's Sent folder: the mailbox marked \Sent, else one called Sent
// in any case, else "Sent".
func sentFolder(s *session) string {
	opts := &imap.ListOptions{ReturnSpecialUse: s.Caps().Has(imap.CapSpecialUse)}
	list, err := s.List("", "*", opts).Collect()
	if err != nil {
		return "Sent"
	}
	named := "Sent"
	for _, m := range list {
		if slices.Contains(m.Attrs, imap.MailboxAttrSent) {
			return m.Mailbox
		}
		if strings.EqualFold(m.Mailbox, "Sent") {
			named = m.Mailbox
		}
	}
	return named
}

// message is an error's words without a steward code ("invalid: ").
func message(err error) string {
	var se *steward.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

// compose writes the message: headers, a text part, and the attachments.
func compose(a Account, out steward.OutgoingMail, sent steward.SentMail, now time.Time) ([]byte, error) {
	var h gomail.Header
	from, err := gomail.ParseAddress(a.From)
	if err != nil {
		return nil, steward.Errorf(steward.CodeInvalid, "the account's from address %q is not an address", a.From)
	}
	h.SetAddressList("From", []*gomail.Address{from})
	to, err := parseList(out.To)
	if err != nil {
		return nil, err
	}
	h.SetAddressList("To", to)
	if len(out.Cc) > 0 {
		cc, err := parseList(out.Cc)
		if err != nil {
			return nil, err
		}
		h.SetAddressList("Cc", cc)
	}
	h.SetSubject(sent.Subject)
	h.SetDate(now)
	h.SetMessageID(strings.Trim(sent.MessageID, "<>"))
	if sent.InReplyTo != "" {
		h.SetMsgIDList("In-Reply-To", []string{sent.InReplyTo})
		h.SetMsgIDList("References", sent.References)
	}
	var buf bytes.Buffer
	if len(out.Attachments) == 0 { // one text part, no multipart around it
		h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
		w, err := gomail.CreateSingleInlineWriter(&buf, h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(out.Body)); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	w, err := gomail.CreateWriter(&buf, h)
	if err != nil {
		return nil, err
	}
	var th gomail.InlineHeader
	th.Set("Content-Type", "text/plain; charset=utf-8")
	tw, err := w.CreateSingleInline(th)
	if err != nil {
		return nil, err
	}
	if _, err := tw.Write([]byte(out.Body)); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	for _, f := range out.Attachments {
		var ah gomail.AttachmentHeader
		ah.Set("Content-Type", f.ContentType)
		ah.SetFilename(f.Name)
		aw, err := w.CreateAttachment(ah)
		if err != nil {
			return nil, err
		}
		if _, err := aw.Write(f.Data); err != nil {
			return nil, err
		}
		if err := aw.Close(); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func parseList(list []string) ([]*gomail.Address, error) {
	out := make([]*gomail.Address, 0, len(list))
	for _, s := range list {
		a, err := gomail.ParseAddress(s)
		if err != nil {
			return nil, steward.Errorf(steward.CodeInvalid, "%q is not a mail address", s)
		}
		out = append(out, a)
	}
	return out, nil
}

// newMessageID is a fresh <random@domain-of-from>.
func newMessageID(from string) string {
	domain := "steward.invalid"
	if a, err := gomail.ParseAddress(from); err == nil {
		if i := strings.LastIndexByte(a.Address, '@'); i >= 0 {
			domain = a.Address[i+1:]
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "<" + hex.EncodeToString(b) + "@" + domain + ">"
}

// smtpSession connects to a's SMTP server and greets it, with TLS as the rules say.
func (c *Client) smtpSession(ctx context.Context, a Account) (*smtp.Client, func(), endpoint, error) {
	e, err := ParseURL(a.SMTPURL, "smtp")
	if err != nil {
		return nil, nil, e, steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	conn, exempt, stop, err := c.dial(ctx, e, "SMTP")
	if err != nil {
		return nil, nil, e, err
	}
	var cl *smtp.Client
	greet := e.implicit || exempt
	if greet {
		cl = smtp.NewClient(conn)
	} else if cl, err = smtp.NewClientStartTLS(conn, c.tlsConfig(e)); err != nil {
		// smtp:// outside STEWARD_EGRESS_ALLOW: STARTTLS or nothing (never a password in clear).
		stop()
		return nil, nil, e, c.failure(ctx, "SMTP", e, "STARTTLS failed (a server reached without TLS must offer it; smtps:// is implicit TLS)", err)
	}
	cl.CommandTimeout, cl.SubmissionTimeout = c.timeout(), c.timeout()
	done := func() { _ = cl.Close(); stop() }
	if greet {
		if err := cl.Hello("steward.invalid"); err != nil {
			done()
			return nil, nil, e, c.failure(ctx, "SMTP", e, "greeting", err)
		}
	}
	if a.Username != "" {
		if err := cl.Auth(saslClient(a, e)); err != nil {
			done()
			if ctx.Err() != nil {
				return nil, nil, e, c.failure(ctx, "SMTP", e, "log in", err)
			}
			if a.Token != "" {
				return nil, nil, e, refused(a, "SMTP server "+e.addr(), " ("+smtpText(err)+")")
			}
			return nil, nil, e, steward.Errorf(steward.CodeInvalid, "the SMTP server %s refused the login of %q: check the user name and password (%s)", e.addr(), a.Username, smtpText(err))
		}
	}
	return cl, done, e, nil
}

// CheckSMTP connects and logs in to the SMTP server without sending: what "test" checks.
func (c *Client) CheckSMTP(ctx context.Context, a Account) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cl, done, _, err := c.smtpSession(ctx, a)
	if err != nil {
		return err
	}
	defer done()
	_ = cl.Quit()
	return nil
}

// submit sends body to the recipients through a's SMTP server, within the client's timeout.
func (c *Client) submit(ctx context.Context, a Account, rcpts []string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cl, done, e, err := c.smtpSession(ctx, a)
	if err != nil {
		return err
	}
	defer done()
	from, _ := gomail.ParseAddress(a.From)
	if err := cl.Mail(from.Address, nil); err != nil {
		return c.failure(ctx, "SMTP", e, "MAIL FROM "+smtpText(err), err)
	}
	for _, r := range rcpts {
		addr, _ := gomail.ParseAddress(r)
		if err := cl.Rcpt(addr.Address, nil); err != nil {
			return steward.Errorf(steward.CodeInvalid, "the SMTP server %s refused the recipient %s: %s", e.addr(), addr.Address, smtpText(err))
		}
	}
	w, err := cl.Data()
	if err != nil {
		return c.failure(ctx, "SMTP", e, "DATA", err)
	}
	if _, err := w.Write(body); err != nil {
		return c.failure(ctx, "SMTP", e, "sending the message", err)
	}
	if err := w.Close(); err != nil {
		return c.failure(ctx, "SMTP", e, "sending the message", err)
	}
	_ = cl.Quit()
	return nil
}

// smtpText is an SMTP error's message.
func smtpText(err error) string {
	if se, ok := err.(*smtp.SMTPError); ok {
		return fmt.Sprintf("%d %s", se.Code, se.Message)
	}
	return err.Error()
}
