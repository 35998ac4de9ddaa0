package mail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/charset"

	"github.com/stewardhq/steward/internal/steward"
)

// Bounds of a search's snippets.
const (
	snippetBytes = 16 << 10 // the start of a message a snippet is read from
	snippetChars = 200
)

// ID is a message's handle for the tools: its folder and IMAP UID ("INBOX:42").
func ID(folder string, uid imap.UID) string {
	return folder + ":" + strconv.FormatUint(uint64(uid), 10)
}

// ParseID splits an ID into its folder and UID (steward.ParseMailID).
func ParseID(id string) (folder string, uid imap.UID, err error) {
	folder, n, err := steward.ParseMailID(id)
	return folder, imap.UID(n), err
}

// session is a logged-in IMAP connection; close ends it.
type session struct {
	*imapclient.Client
	close func()
}

// login connects to a's IMAP server (TLS unless the address is exempt) and logs in.
func (c *Client) login(ctx context.Context, a Account) (*session, error) {
	e, err := ParseURL(a.IMAPURL, "imap")
	if err != nil {
		return nil, steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	conn, exempt, stop, err := c.dial(ctx, e, "IMAP")
	if err != nil {
		return nil, err
	}
	opts := &imapclient.Options{TLSConfig: c.tlsConfig(e), WordDecoder: &mime.WordDecoder{CharsetReader: charset.Reader}}
	var cl *imapclient.Client
	switch {
	case e.implicit || exempt:
		cl = imapclient.New(conn, opts)
	default:
		// imap:// outside STEWARD_EGRESS_ALLOW: STARTTLS or nothing (never a password in clear).
		if cl, err = imapclient.NewStartTLS(conn, opts); err != nil {
			stop()
			return nil, c.failure(ctx, "IMAP", e, "STARTTLS failed (a server reached without TLS must offer it)", err)
		}
	}
	s := &session{Client: cl, close: func() { _ = cl.Close(); stop() }}
	if err := cl.WaitGreeting(); err != nil {
		s.close()
		return nil, c.failure(ctx, "IMAP", e, "no greeting", err)
	}
	if err := c.imapLogin(cl, a, e); err != nil {
		s.close()
		if ctx.Err() != nil {
			return nil, c.failure(ctx, "IMAP", e, "log in", err)
		}
		return nil, refused(a, "IMAP server "+e.addr(), "")
	}
	return s, nil
}

// imapLogin logs in with the password (LOGIN) or the token (AUTHENTICATE).
func (c *Client) imapLogin(cl *imapclient.Client, a Account, e endpoint) error {
	if a.Token == "" {
		return cl.Login(a.Username, a.Password).Wait()
	}
	return cl.Authenticate(saslClient(a, e))
}

// with runs fn on a logged-in session under the client's timeout, then logs out.
func (c *Client) with(ctx context.Context, a Account, fn func(ctx context.Context, s *session) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	s, err := c.login(ctx, a)
	if err != nil {
		return err
	}
	defer s.close()
	err = fn(ctx, s)
	var se *steward.Error
	if err != nil && ctx.Err() != nil && !errors.As(err, &se) {
		e, _ := ParseURL(a.IMAPURL, "imap")
		return c.failure(ctx, "IMAP", e, "a command", err)
	}
	if err == nil {
		_ = s.Logout().Wait()
	}
	return err
}

// CheckLogin logs in to the IMAP server and opens INBOX: what "test" checks.
func (c *Client) CheckLogin(ctx context.Context, a Account) error {
	return c.with(ctx, a, func(ctx context.Context, s *session) error {
		_, err := s.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
		return err
	})
}

// selectFolder opens a folder (read-only for reads); an unknown one is a clear error.
func selectFolder(s *session, folder string, readOnly bool) error {
	if _, err := s.Select(folder, &imap.SelectOptions{ReadOnly: readOnly}).Wait(); err != nil {
		return steward.Errorf(steward.CodeInvalid, "there is no folder %q on the mail server (or it cannot be opened): %v", folder, err)
	}
	return nil
}

// Search lists the messages matching q, newest first, with a snippet of each.
func (c *Client) Search(ctx context.Context, a Account, q steward.MailQuery) ([]steward.MailSummary, error) {
	folder := cmpOr(q.Folder, "INBOX")
	limit := q.Limit
	if limit <= 0 {
		limit = steward.MailDefaultLimit
	}
	limit = min(limit, steward.MailMaxLimit)
	out := []steward.MailSummary{}
	err := c.with(ctx, a, func(ctx context.Context, s *session) error {
		if err := selectFolder(s, folder, true); err != nil {
			return err
		}
		crit := &imap.SearchCriteria{}
		if q.Text != "" {
			crit.Text = []string{q.Text}
		}
		if !q.Since.IsZero() {
			crit.Since = q.Since
		}
		if !q.After.IsZero() {
			crit.Since = q.After // a day; the exact time is checked on the results
		}
		if q.Unread {
			crit.NotFlag = []imap.Flag{imap.FlagSeen}
		}
		data, err := s.UIDSearch(crit, nil).Wait()
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		uids := data.AllUIDs()
		slices.Sort(uids)
		if len(uids) > limit*4 {
			uids = uids[len(uids)-limit*4:] // the newest (a later After filter may drop some)
		}
		if len(uids) == 0 {
			return nil
		}
		msgs, err := s.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Envelope: true, Flags: true, InternalDate: true,
			BodySection: []*imap.FetchItemBodySection{{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: snippetBytes}}}}).Collect()
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		for _, m := range msgs {
			if !q.After.IsZero() && !m.InternalDate.After(q.After) {
				continue
			}
			sum := summaryOf(folder, m)
			if len(m.BodySection) > 0 {
				sum.Snippet, sum.Urgent = snippetOf(m.BodySection[0].Bytes)
			}
			out = append(out, sum)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(x, y steward.MailSummary) int {
		if c := y.Date.Compare(x.Date); c != 0 {
			return c
		}
		_, ux, _ := ParseID(x.ID)
		_, uy, _ := ParseID(y.ID)
		return cmp.Compare(uy, ux) // the later arrival first
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func summaryOf(folder string, m *imapclient.FetchMessageBuffer) steward.MailSummary {
	s := steward.MailSummary{ID: ID(folder, m.UID), Folder: folder, Date: m.InternalDate, Unread: !slices.Contains(m.Flags, imap.FlagSeen),
		Flagged: slices.Contains(m.Flags, imap.FlagFlagged)}
	if env := m.Envelope; env != nil {
		s.Subject = env.Subject
		s.From = addresses(env.From)
		s.To = addresses(env.To)
		if !env.Date.IsZero() {
			s.Date = env.Date
		}
	}
	return s
}

// addresses words an address list: "Name <a@b>, c@d".
func addresses(list []imap.Address) string {
	parts := make([]string, 0, len(list))
	for _, a := range list {
		addr := a.Addr()
		if addr == "" {
			continue
		}
		if a.Name != "" {
			addr = a.Name + " <" + addr + ">"
		}
		parts = append(parts, addr)
	}
	return strings.Join(parts, ", ")
}

// Flags a tool may set or clear.
var Flags = []string{"seen", "unseen", "flagged", "unflagged", "answered"}

// Flag sets or clears a flag of the message id.
func (c *Client) Flag(ctx context.Context, a Account, id, flag string) error {
	folder, uid, err := ParseID(id)
	if err != nil {
		return steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	op, f := imap.StoreFlagsAdd, imap.FlagSeen
	switch flag {
	case "seen":
	case "unseen":
		op = imap.StoreFlagsDel
	case "flagged":
		f = imap.FlagFlagged
	case "unflagged":
		op, f = imap.StoreFlagsDel, imap.FlagFlagged
	case "answered":
		f = imap.FlagAnswered
	default:
		return steward.Errorf(steward.CodeInvalid, "flag must be one of %s", strings.Join(Flags, ", "))
	}
	return c.with(ctx, a, func(ctx context.Context, s *session) error {
		if err := selectFolder(s, folder, false); err != nil {
			return err
		}
		if err := exists(s, uid, id); err != nil {
			return err
		}
		return s.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: op, Silent: true, Flags: []imap.Flag{f}}, nil).Close()
	})
}

// Move moves the message id to folder (which must exist); it returns the message's new id
// when the server says it (UIDPLUS), else "".
func (c *Client) Move(ctx context.Context, a Account, id, to string) (string, error) {
	folder, uid, err := ParseID(id)
	if err != nil {
		return "", steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	var newID string
	err = c.with(ctx, a, func(ctx context.Context, s *session) error {
		if _, err := s.Status(to, &imap.StatusOptions{NumMessages: true}).Wait(); err != nil {
			return steward.Errorf(steward.CodeInvalid, "there is no folder %q on the mail server: %v", to, err)
		}
		if err := selectFolder(s, folder, false); err != nil {
			return err
		}
		if err := exists(s, uid, id); err != nil {
			return err
		}
		data, err := s.Move(imap.UIDSetNum(uid), to).Wait()
		if err != nil {
			return fmt.Errorf("move: %w", err)
		}
		if data != nil {
			if dest, ok := data.DestUIDs.(imap.UIDSet); ok {
				if got, ok := dest.Nums(); ok && len(got) == 1 {
					newID = ID(to, got[0])
				}
			}
		}
		return nil
	})
	return newID, err
}

// exists refuses a UID the selected folder does not hold.
func exists(s *session, uid imap.UID, id string) error {
	data, err := s.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{imap.UIDSetNum(uid)}}, nil).Wait()
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if len(data.AllUIDs()) == 0 {
		return steward.Errorf(steward.CodeNotFound, "there is no message %s (it may have been moved or deleted; search again)", id)
	}
	return nil
}

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return strings.TrimSpace(s)
}
