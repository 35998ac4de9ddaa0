package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// result is what a user sees of one steward invocation.
type result struct {
	stdout, stderr string
	code           int
}

// runCLI runs the CLI in-process, exactly as main does, with env as the environment.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
	code := exitCode(err, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// dbEnv is the environment for a test database, as scripts/devdb env prints it.
func dbEnv(d testdb.DB) map[string]string {
	return map[string]string{"DATABASE_URL": d.OwnerURL, "APP_DATABASE_URL": d.AppURL, "DOOR_DATABASE_URL": d.DoorURL,
		"SUPERUSER_DATABASE_URL": d.SuperURL}
}

// wantOK fails unless the command succeeded.
func wantOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// wantOneLineError fails unless the command failed with exit status 1 and exactly one line
// "steward: …" containing want on stderr.
func wantOneLineError(t *testing.T, r result, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "steward: ") || !strings.Contains(lines[0], want) {
		t.Fatalf("want exit 1 and one line \"steward: …%s…\"; got exit %d, stderr:\n%s", want, r.code, r.stderr)
	}
	for _, bad := range []string{"panic", "goroutine ", ".go:"} {
		if strings.Contains(r.stderr, bad) {
			t.Fatalf("stderr looks like a stack trace: %s", r.stderr)
		}
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   string // substring of stderr
		stdout   string // substring of stdout
		noStdout bool
	}{
		{"no command", nil, 2, "steward: no command given", "", true},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`, "", true},
		{"unknown subcommand", []string{"owners", "delete"}, 2, `unknown subcommand "delete"`, "", true},
		{"missing subcommand", []string{"migrate"}, 2, "missing subcommand", "", true},
		{"unknown flag", []string{"doctor", "--colour"}, 2, "flag provided but not defined: -colour", "", true},
		{"missing name", []string{"owners", "add"}, 2, "missing argument", "", true},
		{"two names", []string{"owners", "add", "a", "b"}, 2, `unexpected argument "b"`, "", true},
		{"bad owner id", []string{"keys", "list", "--owner", "nope"}, 2, `"nope" is not an id`, "", true},
		{"owner required", []string{"keys", "add"}, 2, "--owner ID is required", "", true},
		{"down without --yes", []string{"migrate", "down"}, 2, "run it again with --yes", "", true},
		{"help", []string{"help"}, 0, "", "Usage: steward <command>", false},
		{"subcommand help", []string{"owners", "add", "-h"}, 0, "", "steward owners add NAME", false},
		{"version", []string{"version"}, 0, "", "steward ", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || !strings.Contains(r.stdout, tc.stdout) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.code == 2 && !strings.Contains(r.stderr, "Usage:") {
				t.Fatalf("usage error without usage on stderr: %s", r.stderr)
			}
			if tc.noStdout && r.stdout != "" {
				t.Fatalf("stdout should be empty: %s", r.stdout)
			}
		})
	}
}

func TestConfigErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"malformed DATABASE_URL": {map[string]string{"DATABASE_URL": "postgres://u:hunter2@host:notaport/db"}, "DATABASE_URL is malformed"},
		"two bad variables": {map[string]string{"DATABASE_URL": "postgres://u:hunter2@host:x/db", "STEWARD_ADDR": "8080"},
			"DATABASE_URL is malformed"},
		"DATABASE_URL missing": {nil, "DATABASE_URL is not set"},
		"database unreachable": {map[string]string{"DATABASE_URL": "postgres://steward_owner:hunter2@127.0.0.1:1/steward?sslmode=disable"},
			"connection refused"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"owners", "list"}, {"migrate", "up"}} {
				r := runCLI(t, tc.env, args...)
				wantOneLineError(t, r, tc.want)
				if strings.Contains(r.stderr, "hunter2") {
					t.Fatalf("error shows the password: %s", r.stderr)
				}
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	got := oneLine("failed to connect to `user=x database=y`:\n\t127.0.0.1:1: refused\n\t127.0.0.1:1: refused\nsecond problem\n")
	want := "failed to connect to `user=x database=y`: 127.0.0.1:1: refused; second problem"
	if got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}
