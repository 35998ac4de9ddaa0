package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

func TestOwnersAddPrintsKeyOnce(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	r := runCLI(t, env, "owners", "add", "alice")
	wantOK(t, r)
	key := field(t, r.stdout, "API key: ")
	if !strings.HasPrefix(key, "stw_") || strings.Count(r.stdout+r.stderr, key) != 1 {
		t.Fatalf("want the key printed exactly once, got stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "will not be shown again") {
		t.Fatalf("no warning that the key is shown once: %s", r.stderr)
	}
	// The key works, and listing never shows it again.
	door, err := store.OpenDoor(context.Background(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	p, err := door.Authenticate(context.Background(), key)
	if err != nil || p.OwnerName != "alice" {
		t.Fatalf("authenticate with the printed key: %+v, %v", p, err)
	}
	list := runCLI(t, env, "owners", "list")
	wantOK(t, list)
	keys := runCLI(t, env, "keys", "list", "--owner", p.OwnerID.String())
	wantOK(t, keys)
	if !strings.Contains(list.stdout, "alice") || strings.Contains(list.stdout+keys.stdout, key) {
		t.Fatalf("list: %s\nkeys: %s", list.stdout, keys.stdout)
	}
}

func TestOwnersJSON(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	r := runCLI(t, env, "owners", "list", "--json")
	wantOK(t, r)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty list = %q, want []", r.stdout)
	}
	r = runCLI(t, env, "owners", "add", "--json", "Household Team")
	wantOK(t, r)
	var added map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
		t.Fatalf("owners add --json: %v\n%s", err, r.stdout)
	}
	if len(added) != 3 || added["name"] != "Household Team" || !strings.HasPrefix(added["api_key"], "stw_") || uuid.Validate(added["owner_id"]) != nil {
		t.Fatalf("want exactly {owner_id, name, api_key}, got %s", r.stdout)
	}
	if r.stderr != "" {
		t.Fatalf("--json should keep stderr quiet, got %s", r.stderr)
	}
	r = runCLI(t, env, "owners", "list", "--json")
	wantOK(t, r)
	var owners []struct {
		ID   string `json:"owner_id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &owners); err != nil || len(owners) != 1 || owners[0].ID != added["owner_id"] {
		t.Fatalf("owners list --json = %s (%v)", r.stdout, err)
	}
}

func TestOwnersAddRejectsBadNames(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	cases := map[string]struct{ name, want string }{
		"empty":      {"", "name is empty"},
		"blank":      {"   ", "name is empty"},
		"500 chars":  {strings.Repeat("n", 500), "name is 500 characters long; the limit is 100"},
		"101 runes":  {strings.Repeat("é", 101), "the limit is 100"},
		"json empty": {"", "name is empty"},
	}
	for name, tc := range cases {
		args := []string{"owners", "add", tc.name}
		if name == "json empty" {
			args = append(args, "--json")
		}
		r := runCLI(t, env, args...)
		wantOneLineError(t, r, tc.want)
		if r.stdout != "" {
			t.Errorf("%s: stdout %q, want nothing", name, r.stdout)
		}
	}
	r := runCLI(t, env, "owners", "list", "--json")
	wantOK(t, r)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("bad names created owners: %s", r.stdout)
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	r := runCLI(t, env, "owners", "add", "--json", "carol")
	wantOK(t, r)
	var owner struct {
		ID  string `json:"owner_id"`
		Key string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &owner); err != nil {
		t.Fatal(err)
	}

	r = runCLI(t, env, "keys", "add", "--owner", owner.ID, "--name", "laptop", "--json")
	wantOK(t, r)
	var added map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil {
		t.Fatal(err)
	}
	if len(added) != 4 || added["owner_id"] != owner.ID || added["name"] != "laptop" || uuid.Validate(added["key_id"]) != nil ||
		!strings.HasPrefix(added["api_key"], "stw_") || added["api_key"] == owner.Key {
		t.Fatalf("want {key_id, owner_id, name, api_key}, got %s", r.stdout)
	}

	r = runCLI(t, env, "keys", "list", "--owner", owner.ID)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "laptop") || !strings.Contains(r.stdout, "default") || strings.Contains(r.stdout, added["api_key"]) {
		t.Fatalf("keys list = %s", r.stdout)
	}

	wantOK(t, runCLI(t, env, "keys", "revoke", "--owner", owner.ID, added["key_id"]))
	door, err := store.OpenDoor(context.Background(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	if _, err := door.Authenticate(context.Background(), added["api_key"]); err == nil {
		t.Fatal("a revoked key still authenticates")
	}
	if _, err := door.Authenticate(context.Background(), owner.Key); err != nil {
		t.Fatalf("revoking one key broke another: %v", err)
	}

	// Revoking again, or another owner's key, or for an unknown owner: one line, exit 1.
	wantOneLineError(t, runCLI(t, env, "keys", "revoke", "--owner", owner.ID, added["key_id"]), "not found")
	wantOneLineError(t, runCLI(t, env, "keys", "revoke", "--owner", uuid.NewString(), added["key_id"]), "not found")
	wantOneLineError(t, runCLI(t, env, "keys", "add", "--owner", uuid.NewString()), "not found")
	wantOneLineError(t, runCLI(t, env, "keys", "add", "--owner", owner.ID, "--name", strings.Repeat("k", 500)), "the limit is 100")
}

// field returns the rest of the line of s that starts with prefix.
func field(t *testing.T, s, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no line %q… in:\n%s", prefix, s)
	return ""
}
