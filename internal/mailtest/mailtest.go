// Package mailtest is the tests' real mail and calendar servers (docs/MAIL.md, "Tested
// against real servers"): Dovecot (Debian's dovecot-imapd) and Radicale (radicale), each
// started on a free loopback port in a temporary directory with a passwd-file of test users,
// and an SMTP sink built on github.com/emersion/go-smtp that keeps what it receives. Nothing
// is mocked: the clients speak IMAP, SMTP and CalDAV to them. A test package shares one of
// each (Start in TestMain, Stop after) since starting them takes a second or two.
package mailtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Users are the accounts every server knows, by name, with their passwords (name-secret):
// each test takes its own, so tests sharing the servers do not see each other's mail.
var Users = map[string]string{}

func init() {
	for _, n := range []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar", "peggy", "trent", "ursula", "victor", "walter", "xena", "yara", "zoe"} {
		Users[n] = n + "-secret"
	}
}

// Servers are one Dovecot, one Radicale and one SMTP sink.
type Servers struct {
	dir      string
	IMAP     netip.AddrPort
	CalDAV   netip.AddrPort
	SMTP     netip.AddrPort
	Sink     *Sink
	dovecot  string // its config file, for stopping it
	mu       sync.Mutex
	more     []string // more Dovecots' config files (StartOAuthIMAP), under mu
	radicale *exec.Cmd
	smtp     *smtp.Server
}

// Allow is STEWARD_EGRESS_ALLOW for the three servers (they listen on loopback).
func (s *Servers) Allow() []netip.AddrPort { return []netip.AddrPort{s.IMAP, s.CalDAV, s.SMTP} }

// AllowEnv is the same as the variable's value.
func (s *Servers) AllowEnv() string {
	parts := make([]string, 0, 3)
	for _, a := range s.Allow() {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, ",")
}

// IMAPURL, SMTPURL and CalDAVURL are the servers' URLs (no TLS: the addresses are exempt).
func (s *Servers) IMAPURL() string   { return "imap://" + s.IMAP.String() }
func (s *Servers) SMTPURL() string   { return "smtp://" + s.SMTP.String() }
func (s *Servers) CalDAVURL() string { return "http://" + s.CalDAV.String() + "/" }

// CalendarPath is the collection each user's calendar is at.
func CalendarPath(user string) string { return "/" + user + "/calendar/" }

// Start starts the three servers in a temporary directory; Stop stops them and removes it.
func Start() (*Servers, error) {
	dir, err := os.MkdirTemp("", "steward-mailtest-")
	if err != nil {
		return nil, err
	}
	s := &Servers{dir: dir}
	if err := s.startDovecot(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.startRadicale(); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.startSMTP(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops every server started and removes their directory.
func (s *Servers) Stop() {
	s.mu.Lock()
	confs := append([]string{s.dovecot}, s.more...)
	s.mu.Unlock()
	for _, conf := range confs {
		if dovecot, err := binary("dovecot"); err == nil && conf != "" {
			_ = exec.Command(dovecot, "-c", conf, "stop").Run()
		}
	}
	if s.radicale != nil && s.radicale.Process != nil {
		_ = s.radicale.Process.Kill()
		_, _ = s.radicale.Process.Wait()
	}
	if s.smtp != nil {
		_ = s.smtp.Close()
	}
	_ = os.RemoveAll(s.dir)
}

// binary finds a server's program on PATH or in /usr/sbin (Debian puts dovecot there, off an
// ordinary user's PATH).
func binary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return exec.LookPath(filepath.Join("/usr/sbin", name))
}

// freePort is a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitFor waits until addr accepts connections.
func waitFor(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after %s", addr, d)
}

// startDovecot runs Dovecot on a free port: IMAP only, no TLS, passwd-file users, Maildir.
// As root its processes run as Debian's dovecot and dovenull users (it refuses to log in as
// root), else as the current user.
func (s *Servers) startDovecot() error {
	var passwd strings.Builder
	for name, pw := range Users {
		fmt.Fprintf(&passwd, "%s:{PLAIN}%s\n", name, pw)
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "dovecot"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, "dovecot", "passwd"), []byte(passwd.String()), 0o644); err != nil {
		return err
	}
	addr, conf, err := s.runDovecot("dovecot", "plain login", fmt.Sprintf(`passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%%u %s/passwd
}`, filepath.Join(s.dir, "dovecot")))
	s.IMAP, s.dovecot = addr, conf
	return err
}

// StartOAuthIMAP starts a second Dovecot whose only passdb is oauth2: it takes SASL XOAUTH2
// and OAUTHBEARER and asks introspectURL (RFC 7662, POST) whether a bearer token is live and
// whose it is; the user is the token's username. Stop stops it with the others.
func (s *Servers) StartOAuthIMAP(introspectURL string) (netip.AddrPort, error) {
	base, err := os.MkdirTemp(s.dir, "dovecot-oauth-")
	if err != nil {
		return netip.AddrPort{}, err
	}
	ext := filepath.Join(base, "oauth2.conf.ext")
	if err := os.WriteFile(ext, []byte("introspection_mode = post\nintrospection_url = "+introspectURL+
		"\nusername_attribute = username\nactive_attribute = active\nactive_value = true\nforce_introspection = yes\n"), 0o644); err != nil {
		return netip.AddrPort{}, err
	}
	addr, conf, err := s.runDovecot(filepath.Base(base), "xoauth2 oauthbearer", "passdb {\n  driver = oauth2\n  args = "+ext+"\n}")
	if conf != "" {
		s.mu.Lock()
		s.more = append(s.more, conf)
		s.mu.Unlock()
	}
	return addr, err
}

// runDovecot runs a Dovecot in s.dir/name with a passdb and SASL mechanisms; it returns its
// address and configuration file (for stopping it).
func (s *Servers) runDovecot(name, mechanisms, passdb string) (netip.AddrPort, string, error) {
	none := netip.AddrPort{}
	dovecot, err := binary("dovecot")
	if err != nil {
		return none, "", errors.New("dovecot is not installed: apt-get install dovecot-imapd (.ci/run installs it)")
	}
	if v, err := exec.Command(dovecot, "--version").Output(); err != nil || !strings.HasPrefix(string(v), "2.3.") {
		return none, "", fmt.Errorf("mailtest writes a Dovecot 2.3 configuration (Debian bookworm's dovecot-imapd); this is Dovecot %s", strings.TrimSpace(string(v)))
	}
	port, err := freePort()
	if err != nil {
		return none, "", err
	}
	base := filepath.Join(s.dir, name)
	for _, d := range []string{"run", "state", "home"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			return none, "", err
		}
	}
	me, err := user.Current()
	if err != nil {
		return none, "", err
	}
	internal, login, uid, gid := me.Username, me.Username, me.Uid, me.Gid
	if me.Uid == "0" {
		dv, err := user.Lookup("dovecot")
		if err != nil {
			return none, "", fmt.Errorf("running as root, Dovecot needs its dovecot user: %w", err)
		}
		internal, login, uid, gid = "dovecot", "dovenull", dv.Uid, dv.Gid
		// Its users' mail lives under the temporary directory, which they must reach.
		for _, d := range []string{s.dir, base} {
			if err := os.Chmod(d, 0o755); err != nil {
				return none, "", err
			}
		}
		n, _ := strconv.Atoi(uid)
		g, _ := strconv.Atoi(gid)
		if err := os.Chown(filepath.Join(base, "home"), n, g); err != nil {
			return none, "", err
		}
	}
	conf := fmt.Sprintf(`base_dir = %[1]s/run
state_dir = %[1]s/state
log_path = %[1]s/dovecot.log
instance_name = steward-mailtest-%[2]d
listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = %[7]s
default_internal_user = %[3]s
default_internal_group = %[3]s
default_login_user = %[4]s
first_valid_uid = 0
mail_location = maildir:~/Maildir
%[8]s
userdb {
  driver = static
  args = uid=%[5]s gid=%[6]s home=%[1]s/home/%%u
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Archive {
    auto = create
    special_use = \Archive
  }
  mailbox Sent {
    auto = create
    special_use = \Sent
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = %[2]d
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
protocol imap {
  mail_max_userip_connections = 200
}
`, base, port, internal, login, uid, gid, mechanisms, passdb)
	if me.Uid != "0" {
		conf = strings.Replace(conf, "default_internal_group = "+internal+"\n", "", 1)
	}
	confPath := filepath.Join(base, "dovecot.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return none, "", err
	}
	// Dovecot forks into the background, its children keeping the descriptors they were
	// given: a file, not a pipe, or waiting for the command's output would never end.
	out, err := os.Create(filepath.Join(base, "start.log"))
	if err != nil {
		return none, "", err
	}
	defer out.Close()
	cmd := exec.Command(dovecot, "-c", confPath)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		msg, _ := os.ReadFile(out.Name())
		return none, "", fmt.Errorf("dovecot: %v: %s", err, msg)
	}
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	if err := waitFor(addr.String(), 10*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(base, "dovecot.log"))
		return none, confPath, fmt.Errorf("dovecot: %v\n%s", err, log)
	}
	return addr, confPath, nil
}

// startRadicale runs Radicale on a free port with htpasswd users (plain) and a calendar
// collection for each.
func (s *Servers) startRadicale() error {
	if _, err := exec.LookPath("radicale"); err != nil {
		return errors.New("radicale is not installed: apt-get install radicale (.ci/run installs it)")
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	base := filepath.Join(s.dir, "radicale")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	var users strings.Builder
	for name, pw := range Users {
		fmt.Fprintf(&users, "%s:%s\n", name, pw)
	}
	if err := os.WriteFile(filepath.Join(base, "users"), []byte(users.String()), 0o644); err != nil {
		return err
	}
	conf := fmt.Sprintf(`[server]
hosts = 127.0.0.1:%[2]d
[auth]
type = htpasswd
htpasswd_filename = %[1]s/users
htpasswd_encryption = plain
delay = 0
[storage]
filesystem_folder = %[1]s/collections
[logging]
level = warning
`, base, port)
	if err := os.WriteFile(filepath.Join(base, "config"), []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("radicale", "-C", filepath.Join(base, "config"))
	logFile, err := os.Create(filepath.Join(base, "radicale.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("radicale: %w", err)
	}
	s.radicale = cmd
	s.CalDAV = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	if err := waitFor(s.CalDAV.String(), 15*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(base, "radicale.log"))
		return fmt.Errorf("radicale: %v\n%s", err, log)
	}
	for name := range Users {
		body := `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>Calendar</D:displayname></D:prop></D:set></C:mkcalendar>`
		resp, err := s.CalDAVRequest(name, "MKCALENDAR", CalendarPath(name), "application/xml", []byte(body), nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("radicale: MKCALENDAR for %s: %d", name, resp.StatusCode)
		}
	}
	return nil
}

// CalDAVRequest sends one request to Radicale as user (a test's change on the server).
func (s *Servers) CalDAVRequest(user, method, path, contentType string, body []byte, header map[string]string) (*http.Response, error) {
	req, err := http.NewRequest(method, "http://"+s.CalDAV.String()+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(user, Users[user])
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

// PutEvent stores an iCalendar object in user's calendar as name.ics.
func (s *Servers) PutEvent(user, name, ics string) error {
	resp, err := s.CalDAVRequest(user, http.MethodPut, CalendarPath(user)+name+".ics", "text/calendar; charset=utf-8",
		[]byte(strings.ReplaceAll(ics, "\n", "\r\n")), nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT %s: %d %s", name, resp.StatusCode, b)
	}
	return nil
}

// IMAP logs in to Dovecot as user, for a test to seed or inspect a mailbox.
func (s *Servers) IMAPClient(user string) (*imapclient.Client, error) {
	c, err := imapclient.DialInsecure(s.IMAP.String(), nil)
	if err != nil {
		return nil, err
	}
	if err := c.Login(user, Users[user]).Wait(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Append stores a raw message (CRLF line ends are made) in user's folder, unread; it returns
// the message's UID.
func (s *Servers) Append(user, folder, raw string) (imap.UID, error) {
	c, err := s.IMAPClient(user)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	data := []byte(strings.ReplaceAll(strings.ReplaceAll(raw, "\r\n", "\n"), "\n", "\r\n"))
	cmd := c.Append(folder, int64(len(data)), nil)
	if _, err := cmd.Write(data); err != nil {
		return 0, err
	}
	if err := cmd.Close(); err != nil {
		return 0, err
	}
	res, err := cmd.Wait()
	if err != nil {
		return 0, err
	}
	return res.UID, nil
}

// Sink is an SMTP server that keeps every message it is given, after AUTH PLAIN with a
// test user's password.
type Sink struct {
	mu     sync.Mutex
	msgs   []Received
	bearer func(token string) (user string, ok bool)
}

// SetBearer lets the sink take XOAUTH2 and OAUTHBEARER logins too: check says whose a bearer
// token is (the tests' authorization server's introspection).
func (k *Sink) SetBearer(check func(token string) (user string, ok bool)) {
	k.mu.Lock()
	k.bearer = check
	k.mu.Unlock()
}

// Received is one message the sink took.
type Received struct {
	User string
	From string
	To   []string
	Data []byte
}

// Messages returns what the sink received so far from user (logged in as user).
func (k *Sink) Messages(user string) []Received {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []Received
	for _, m := range k.msgs {
		if m.User == user {
			out = append(out, m)
		}
	}
	return out
}

func (s *Servers) startSMTP() error {
	k := &Sink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{sink: k}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	srv.MaxMessageBytes = 64 << 20
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(l) }()
	s.smtp, s.Sink = srv, k
	s.SMTP = netip.MustParseAddrPort(l.Addr().String())
	return nil
}

type sinkSession struct {
	sink *Sink
	user string
	cur  Received
}

func (x *sinkSession) AuthMechanisms() []string {
	return []string{sasl.Plain, sasl.OAuthBearer, "XOAUTH2"}
}

// bearerUser is whose a token is, if the sink takes bearer tokens and this one is live.
func (x *sinkSession) bearerUser(username, token string) error {
	x.sink.mu.Lock()
	check := x.sink.bearer
	x.sink.mu.Unlock()
	if check == nil {
		return errors.New("bearer tokens are not taken")
	}
	if user, ok := check(token); ok && user == username {
		x.user = username
		return nil
	}
	return errors.New("invalid token")
}

func (x *sinkSession) Auth(mech string) (sasl.Server, error) {
	switch mech {
	case sasl.OAuthBearer:
		return sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			if err := x.bearerUser(o.Username, o.Token); err != nil {
				return &sasl.OAuthBearerError{Status: "invalid_token"}
			}
			return nil
		}), nil
	case "XOAUTH2":
		return xoauth2Server{x}, nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		if pw, ok := Users[username]; !ok || pw != password {
			return errors.New("invalid credentials")
		}
		x.user = username
		return nil
	}), nil
}

func (x *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if x.user == "" {
		return &smtp.SMTPError{Code: 530, Message: "authentication required"}
	}
	x.cur = Received{User: x.user, From: from}
	return nil
}

func (x *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.cur.To = append(x.cur.To, to)
	return nil
}

func (x *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.cur.Data = b
	x.sink.mu.Lock()
	x.sink.msgs = append(x.sink.msgs, x.cur)
	x.sink.mu.Unlock()
	return nil
}

// xoauth2Server takes "user=U^Aauth=Bearer T^A^A" (Google's and Microsoft's XOAUTH2).
type xoauth2Server struct{ x *sinkSession }

func (s xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	var user, token string
	for _, f := range strings.Split(string(response), "\x01") {
		if v, ok := strings.CutPrefix(f, "user="); ok {
			user = v
		} else if v, ok := strings.CutPrefix(f, "auth=Bearer "); ok {
			token = v
		}
	}
	if err := s.x.bearerUser(user, token); err != nil {
		return nil, true, err
	}
	return nil, true, nil
}

func (x *sinkSession) Reset()        { x.cur = Received{} }
func (x *sinkSession) Logout() error { return nil }

// Main is a package's TestMain over these servers: it starts them into *s (failing the run in
// words when they cannot start), runs the tests and stops them.
func Main(m *testing.M, s **Servers) {
	var err error
	if *s, err = Start(); err != nil {
		fmt.Fprintln(os.Stderr, "mailtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	(*s).Stop()
	os.Exit(code)
}
