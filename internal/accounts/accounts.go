// Package accounts is the service of the owner's mail and calendar accounts
// (docs/ARCHITECTURE.md §7, §15; docs/MAIL.md): add one of each kind (its servers checked
// against the egress guard and logged in to before anything is stored, the password sealed
// with STEWARD_SECRET_KEY), list, test and remove them, and — as the port of the mail and
// calendar tools (internal/tools/mailtools) and of the briefings — open the owner's account
// in a short transaction of its own and speak to its servers (internal/mail,
// internal/calendar) outside any.
package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/calendar"
	smail "github.com/stewardhq/steward/internal/mail"
	"github.com/stewardhq/steward/internal/oauth"
	"github.com/stewardhq/steward/internal/secret"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// The kinds of account.
const (
	Mail     = "mail"
	Calendar = "calendar"
)

// Service is the owner's accounts.
type Service struct {
	Store    *store.Store
	Sealer   *secret.Sealer
	Mail     *smail.Client
	Calendar *calendar.Client
	// OAuth is the sign-ins with providers (nil: none on this server).
	OAuth *oauth.Service
	// Now is the clock (nil: the system clock).
	Now steward.Clock
}

// MailInput is a mail account to add: POST /v1/accounts/mail.
type MailInput struct {
	IMAPURL  string `json:"imap_url"`
	SMTPURL  string `json:"smtp_url"`
	Username string `json:"username"`
	Password string `json:"password"`
	From     string `json:"from"`
}

// CalendarInput is a calendar account to add: POST /v1/accounts/calendar.
type CalendarInput struct {
	CalDAVURL string `json:"caldav_url"`
	Username  string `json:"username"`
	Password  string `json:"password"`
	// TimeZone is the owner's IANA zone, in which events are listed (default UTC).
	TimeZone string `json:"timezone,omitempty"`
}

// View is what the owner sees of an account: never its password.
type View struct {
	Kind      string `json:"kind"`
	Username  string `json:"username"`
	IMAPURL   string `json:"imap_url,omitempty"`
	SMTPURL   string `json:"smtp_url,omitempty"`
	From      string `json:"from,omitempty"`
	CalDAVURL string `json:"caldav_url,omitempty"`
	Calendar  string `json:"calendar,omitempty"`
	TimeZone  string `json:"timezone,omitempty"`
	// OAuth is the provider the account signs in with ("" : a password).
	OAuth     string    `json:"oauth,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// TestResult is the outcome of a test: the account's servers answered and took the login.
type TestResult struct {
	Kind  string `json:"kind"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func invalid(format string, a ...any) error { return steward.Errorf(steward.CodeInvalid, format, a...) }

// checkLogin checks a username and password's shape.
func checkLogin(username, password string) error {
	if strings.TrimSpace(username) == "" || len(username) > 320 || strings.ContainsAny(username, "\r\n\x00") {
		return invalid("username is required (at most 320 characters, one line)")
	}
	if password == "" || len(password) > 1024 || strings.ContainsAny(password, "\r\n\x00") {
		return invalid("password is required (the account's password or an app password, at most 1024 characters)")
	}
	return nil
}

// AddMail checks a mail account — its URLs and addresses, the guard, a login to both servers
// — and stores it with its password sealed. Nothing is stored when a check fails; a second
// mail account is a conflict.
func (s *Service) AddMail(ctx context.Context, ownerID uuid.UUID, in MailInput) (View, error) {
	a := smail.Account{IMAPURL: strings.TrimSpace(in.IMAPURL), SMTPURL: strings.TrimSpace(in.SMTPURL),
		Username: strings.TrimSpace(in.Username), Password: in.Password, From: strings.TrimSpace(in.From)}
	if err := checkLogin(a.Username, a.Password); err != nil {
		return View{}, err
	}
	if a.From == "" {
		a.From = a.Username
	}
	if addr, err := mail.ParseAddress(a.From); err != nil || len(a.From) > 320 {
		return View{}, invalid("from must be the address mail is sent from, such as Ada <ada@example.com>")
	} else if !strings.Contains(addr.Address, "@") {
		return View{}, invalid("from must be a mail address")
	}
	if err := s.Mail.Check(ctx, a); err != nil {
		return View{}, err
	}
	if err := s.exists(ctx, ownerID, Mail); err != nil {
		return View{}, err
	}
	if err := s.Mail.CheckLogin(ctx, a); err != nil {
		return View{}, err
	}
	if err := s.Mail.CheckSMTP(ctx, a); err != nil {
		return View{}, err
	}
	return s.create(ctx, ownerID, Mail, a, a.Password)
}

// AddCalendar checks a calendar account — its URL, the guard, a login, a calendar of events
// found — and stores it, with the calendar's path and the owner's zone, its password sealed.
func (s *Service) AddCalendar(ctx context.Context, ownerID uuid.UUID, in CalendarInput) (View, error) {
	a := calendar.Account{URL: strings.TrimSpace(in.CalDAVURL), Username: strings.TrimSpace(in.Username), Password: in.Password,
		TimeZone: strings.TrimSpace(in.TimeZone)}
	if err := checkLogin(a.Username, a.Password); err != nil {
		return View{}, err
	}
	if len(a.URL) > 2048 {
		return View{}, invalid("caldav_url is longer than 2048 characters")
	}
	if a.TimeZone == "" {
		a.TimeZone = "UTC"
	}
	if _, err := time.LoadLocation(a.TimeZone); err != nil || strings.EqualFold(a.TimeZone, "local") {
		return View{}, invalid("timezone %q is not an IANA time zone such as Europe/Berlin", a.TimeZone)
	}
	if err := s.Calendar.Check(ctx, a); err != nil {
		return View{}, err
	}
	if err := s.exists(ctx, ownerID, Calendar); err != nil {
		return View{}, err
	}
	path, err := s.Calendar.Find(ctx, a)
	if err != nil {
		return View{}, err
	}
	a.Calendar = path
	return s.create(ctx, ownerID, Calendar, a, a.Password)
}

// exists refuses a second account of a kind before any server is asked.
func (s *Service) exists(ctx context.Context, ownerID uuid.UUID, kind string) error {
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		_, err := tx.Accounts.Get(ctx, kind)
		return err
	})
	if err == nil {
		return steward.Errorf(steward.CodeConflict, "a %s account is connected already; remove it first", kind)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// create seals the password and stores the account's settings.
func (s *Service) create(ctx context.Context, ownerID uuid.UUID, kind string, settings any, password string) (View, error) {
	sealed, err := s.Sealer.Seal([]byte(password), ownerID[:])
	if errors.Is(err, secret.ErrNoKey) {
		return View{}, invalid("this deployment has no STEWARD_SECRET_KEY, so an account's password cannot be stored; ask the operator to set it")
	}
	if err != nil {
		return View{}, err
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return View{}, err
	}
	var row store.StoredAccount
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		row, err = tx.Accounts.Create(ctx, store.StoredAccount{Kind: kind, Settings: raw, Secret: sealed})
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return View{}, steward.Errorf(steward.CodeConflict, "a %s account is connected already; remove it first", kind)
	}
	if err != nil {
		return View{}, err
	}
	return viewOf(row), nil
}

func viewOf(r store.StoredAccount) View {
	v := View{Kind: r.Kind, CreatedAt: r.CreatedAt, OAuth: providerOf(r)}
	switch r.Kind {
	case Mail:
		var a smail.Account
		_ = json.Unmarshal(r.Settings, &a)
		v.Username, v.IMAPURL, v.SMTPURL, v.From = a.Username, a.IMAPURL, a.SMTPURL, a.From
	case Calendar:
		var a calendar.Account
		_ = json.Unmarshal(r.Settings, &a)
		v.Username, v.CalDAVURL, v.Calendar, v.TimeZone = a.Username, a.URL, a.Calendar, a.TimeZone
	}
	return v
}

// List returns the owner's accounts (mail before calendar is not promised: by kind).
func (s *Service) List(ctx context.Context, ownerID uuid.UUID) ([]View, error) {
	var rows []store.StoredAccount
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		rows, err = tx.Accounts.List(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]View, len(rows))
	for i, r := range rows {
		out[i] = viewOf(r)
	}
	return out, nil
}

// Remove deletes the owner's account of a kind.
func (s *Service) Remove(ctx context.Context, ownerID uuid.UUID, kind string) error {
	if err := checkKind(kind); err != nil {
		return err
	}
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error { return tx.Accounts.Delete(ctx, kind) })
	if errors.Is(err, store.ErrNotFound) {
		return steward.Errorf(steward.CodeNotFound, "no %s account is connected", kind)
	}
	return err
}

// Test logs in to the account's servers again (outside any transaction).
func (s *Service) Test(ctx context.Context, ownerID uuid.UUID, kind string) (TestResult, error) {
	if err := checkKind(kind); err != nil {
		return TestResult{}, err
	}
	var err error
	switch kind {
	case Mail:
		_, err = withMail(ctx, s, ownerID, func(a smail.Account) (struct{}, error) {
			if err := s.Mail.CheckLogin(ctx, a); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, s.Mail.CheckSMTP(ctx, a)
		})
	case Calendar:
		_, err = withCalendar(ctx, s, ownerID, func(a calendar.Account) (string, error) { return s.Calendar.Find(ctx, a) })
	}
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return TestResult{}, err
	}
	res := TestResult{Kind: kind, OK: err == nil}
	if words, ok := steward.Words(err); ok {
		res.Error = words
	} else if err != nil {
		return TestResult{}, err
	}
	return res, nil
}

func checkKind(kind string) error {
	if kind != Mail && kind != Calendar {
		return steward.Errorf(steward.CodeNotFound, "an account's kind is mail or calendar, not %q", kind)
	}
	return nil
}

// open reads the owner's account of a kind in a short transaction and opens its password.
func (s *Service) open(ctx context.Context, ownerID uuid.UUID, kind string, settings any) (string, error) {
	var row store.StoredAccount
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		row, err = tx.Accounts.Get(ctx, kind)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return "", steward.Errorf(steward.CodeNotFound, "no %s account is connected: the owner can add one in Settings → Mail and calendar (or POST /v1/accounts/%s)", kind, kind)
	}
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(row.Settings, settings); err != nil {
		return "", fmt.Errorf("%s account settings: %w", kind, err)
	}
	plain, err := s.Sealer.Open(row.Secret, ownerID[:])
	if err != nil {
		return "", steward.Errorf(steward.CodeInvalid, "the %s account's password cannot be opened (was STEWARD_SECRET_KEY changed?): remove the account and add it again", kind)
	}
	return string(plain), nil
}

func (s *Service) mailAccount(ctx context.Context, ownerID uuid.UUID) (smail.Account, error) {
	var a smail.Account
	pw, err := s.open(ctx, ownerID, Mail, &a)
	a.Password = pw
	if err == nil && a.OAuth != "" {
		a.Password = ""
		a.Token, err = s.token(ctx, ownerID, a.OAuth, "")
	}
	return a, err
}

func (s *Service) calendarAccount(ctx context.Context, ownerID uuid.UUID) (calendar.Account, error) {
	var a calendar.Account
	pw, err := s.open(ctx, ownerID, Calendar, &a)
	a.Password = pw
	if err == nil && a.OAuth != "" {
		a.Password = ""
		a.Token, err = s.token(ctx, ownerID, a.OAuth, "")
	}
	return a, err
}

// Connected reports which kinds the owner has connected.
func (s *Service) Connected(ctx context.Context, ownerID uuid.UUID) (mailOK, calendarOK bool, err error) {
	views, err := s.List(ctx, ownerID)
	for _, v := range views {
		mailOK = mailOK || v.Kind == Mail
		calendarOK = calendarOK || v.Kind == Calendar
	}
	return mailOK, calendarOK, err
}
