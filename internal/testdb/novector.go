package testdb

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// WithoutVector starts a PostgreSQL server that has no pgvector — a database Steward cannot
// use — on a free loopback port, for t alone, and returns its superuser's URL. It runs the
// first installed server (/usr/lib/postgresql/*/bin, Debian's layout) whose share directory
// lacks vector.control, as the postgres user when the test runs as root. It fails, never
// skips, when there is none: install Debian's postgresql package (.ci/run does).
func WithoutVector(t testing.TB) string {
	t.Helper()
	bin := serverWithoutVector(t)
	dir, err := os.MkdirTemp("", "steward-novector-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		if os.Geteuid() == 0 {
			// initdb and postgres refuse to run as root.
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
		return cmd
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("a server without pgvector runs as the postgres user, which does not exist: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb of a server without pgvector: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := run("postgres", "-D", data, "-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", dir, "-c", "fsync=off")
	logs := &Buffer{}
	server.Stdout, server.Stderr = logs, logs
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-server.Process.Pid, syscall.SIGTERM) //nolint:errcheck // gone is fine
		server.Wait()                                      //nolint:errcheck // stopped
	})
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, url)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server without pgvector did not start: %v\n%s", err, logs.String())
		}
	}
}

// serverWithoutVector is the bin directory of an installed PostgreSQL without pgvector.
func serverWithoutVector(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for _, bin := range dirs {
		version := filepath.Base(filepath.Dir(bin))
		if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join("/usr/share/postgresql", version, "extension", "vector.control")); err == nil {
			continue
		}
		return bin
	}
	t.Fatal("no PostgreSQL without pgvector is installed (looked in /usr/lib/postgresql/*/bin): apt-get install postgresql")
	return ""
}
