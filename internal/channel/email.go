package channel

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"strconv"
	"time"
)

// sendMail sends m by SMTP with the standard library's net/smtp (no dependency): implicit
// TLS ("tls", port 465) or STARTTLS, which is required ("starttls": a server that does not
// offer it is refused, never spoken to in the clear). The connection goes through the SSRF
// guard; the password is sent only over TLS (PLAIN auth).
func (s *Sender) sendMail(ctx context.Context, t Target, m Message) (bool, error) {
	st := t.Settings
	addr := net.JoinHostPort(st.Host, strconv.Itoa(st.Port))
	conn, err := s.smtp.Dial(ctx, addr)
	if err != nil {
		return false, t.errorf("connect to the SMTP server: %v", err)
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	tlsConf := &tls.Config{ServerName: st.Host, MinVersion: tls.VersionTLS12, RootCAs: s.rootCAs}
	if st.TLS == "tls" {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return false, t.errorf("TLS with the SMTP server: %v", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, st.Host)
	if err != nil {
		return smtpFinal(err), t.errorf("SMTP greeting: %v", err)
	}
	defer c.Close()
	if err := c.Hello("steward.invalid"); err != nil {
		return smtpFinal(err), t.errorf("SMTP EHLO: %v", err)
	}
	if st.TLS != "tls" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return true, errors.New("the SMTP server does not offer STARTTLS (plain SMTP is refused)")
		}
		if err := c.StartTLS(tlsConf); err != nil {
			return false, t.errorf("SMTP STARTTLS: %v", err)
		}
	}
	if st.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", st.Username, t.Secrets.Password, st.Host)); err != nil {
			return smtpFinal(err), t.errorf("SMTP login: %v", err)
		}
	}
	if err := c.Mail(st.From); err != nil {
		return smtpFinal(err), t.errorf("SMTP MAIL FROM: %v", err)
	}
	if err := c.Rcpt(st.To); err != nil {
		return smtpFinal(err), t.errorf("SMTP RCPT TO: %v", err)
	}
	w, err := c.Data()
	if err != nil {
		return smtpFinal(err), t.errorf("SMTP DATA: %v", err)
	}
	if _, err := w.Write(mailBody(st, m)); err != nil {
		return false, t.errorf("SMTP message: %v", err)
	}
	if err := w.Close(); err != nil {
		return smtpFinal(err), t.errorf("SMTP message: %v", err)
	}
	_ = c.Quit()
	return false, nil
}

// mailBody is the message: headers (the subject MIME-encoded, a Message-ID from the
// notification id so a receiver can drop a duplicate) and a quoted-printable text body.
func mailBody(st Settings, m Message) []byte {
	subject := m.Title
	if subject == "" {
		subject = "Steward notification"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@steward.notify>\r\n",
		st.From, st.To, mime.QEncoding.Encode("utf-8", truncateRunes(subject, 200)), time.Now().UTC().Format(time.RFC1123Z), m.ID)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(EmailText(m.Text)))
	_ = qp.Close()
	b.WriteString("\r\n")
	return b.Bytes()
}

// smtpFinal reports a permanent SMTP reply (5xx): retrying will not help.
func smtpFinal(err error) bool {
	var te *textproto.Error
	return errors.As(err, &te) && te.Code >= 500
}
