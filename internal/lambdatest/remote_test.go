//go:build unix

package lambdatest

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/awsapi/awsapitest"
	"github.com/stewardhq/steward/internal/customresource"
	"github.com/stewardhq/steward/internal/store"
)

// remoteCLI runs `steward remote …` against the migrate function under the emulator, with
// the operator's AWS credentials and no database connection.
type remoteCLI struct {
	steward, endpoint string
}

func (c remoteCLI) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(c.steward, append(append([]string{"remote"}, args...), "--function", "function")...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "AWS_REGION=" + awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID=" + awsapitest.Creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsapitest.Creds.SecretAccessKey, "AWS_ENDPOINT_URL_LAMBDA=" + c.endpoint}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// ok runs a command that must succeed and returns its output.
func (c remoteCLI) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.run(t, args...)
	if err != nil {
		t.Fatalf("steward remote %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestRemoteOperatorCommands: every operator task of docs/DEPLOY.md's day two is a `steward
// remote` command — owners, budgets, key recovery, the kill switches, households, job schedules, webhooks — served by the
// migrate function as steward_owner on a real PostgreSQL, so an operator whose database sits
// in private subnets needs no SQL. Each command's effect is seen where an owner sees it:
// the api function's answers to their keys, and the database's state.
func TestRemoteOperatorCommands(t *testing.T) {
	t.Parallel()
	rie := findRIE(t)
	d := newDeployment(t, nil)
	cf := newFakeCloudFormation(t)
	bins := buildBootstraps(t, runtime.GOARCH, "functions/migrate", "functions/api")
	migrate := startRIE(t, rie, "migrate", bins["functions/migrate"], d.env("/steward/database-url", "2", 120))
	migrate.invoke(t, migrateEvent(cf, customresource.Create, "2", ""))
	if a := cf.answer(t); a.Status != "SUCCESS" {
		t.Fatalf("create: %+v", a)
	}
	// The api function, started anew when a test needs a cold start: a running one trusts a
	// key it has seen for up to auth.CacheTTL.
	startAPI := func() *emulator {
		return startRIE(t, rie, "api", bins["functions/api"], []string{
			"AWS_REGION=" + awsapitest.Creds.Region, "AWS_ACCESS_KEY_ID=" + awsapitest.Creds.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + awsapitest.Creds.SecretAccessKey, "AWS_SESSION_TOKEN=" + awsapitest.Creds.SessionToken,
			"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + d.secrets.URL,
			"APP_DATABASE_URL_SSM=" + d.roleARNs[store.AppRole], "DOOR_DATABASE_URL_SSM=" + d.roleARNs[store.DoorRole],
			"AWS_LAMBDA_FUNCTION_TIMEOUT=30",
		})
	}
	api := startAPI()
	cli := remoteCLI{steward: buildCLI(t), endpoint: strings.TrimSuffix(migrate.url, "2015-03-31/functions/function/invocations")}
	status := func(key string) int {
		code, _ := api.invokeHTTPAPI(t, apiEvent("GET", "/v1/approvals", key))
		return code
	}

	// Owners: add, list.
	var alice struct{ OwnerID, APIKey string }
	out := cli.ok(t, "owners", "add", "alice", "--json")
	if err := json.Unmarshal([]byte(out), &struct {
		OwnerID *string `json:"owner_id"`
		APIKey  *string `json:"api_key"`
	}{&alice.OwnerID, &alice.APIKey}); err != nil || alice.APIKey == "" {
		t.Fatalf("remote owners add alice --json: %q (%v)", out, err)
	}
	if status(alice.APIKey) != http.StatusOK {
		t.Fatal("alice's first key is refused")
	}
	var owners []store.Owner
	if out = cli.ok(t, "owners", "list", "--json"); json.Unmarshal([]byte(out), &owners) != nil || len(owners) != 1 || owners[0].Name != "alice" || owners[0].ID.String() != alice.OwnerID {
		t.Fatalf("remote owners list --json: %q; want alice", out)
	}
	if out = cli.ok(t, "owners", "list"); !strings.Contains(out, alice.OwnerID) || !strings.Contains(out, "alice") {
		t.Fatalf("remote owners list: %q", out)
	}

	// Budgets: set, and the database holds them.
	out = cli.ok(t, "owners", "budget", "--owner", alice.OwnerID, "--messages", "3", "--cost-usd", "0.25")
	if !strings.Contains(out, "3 messages a day, $0.25 a day") {
		t.Fatalf("remote owners budget: %q", out)
	}
	door, err := store.OpenDoor(context.Background(), d.storedURL(t, store.OwnerRole))
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	limits, err := door.UpdateDailyLimits(context.Background(), uuid.MustParse(alice.OwnerID), nil, nil)
	if err != nil || limits.Messages != 3 || limits.CostMicros != 250_000 {
		t.Fatalf("alice's limits in the database: %+v (%v); want 3 messages and $0.25", limits, err)
	}
	if out, err := cli.run(t, "owners", "budget", "--owner", uuid.NewString(), "--messages", "1"); err == nil || !strings.Contains(out, "steward: remote owners: owners budget:") {
		t.Errorf("a budget for an owner who does not exist: %v\n%s; want an error in words", err, out)
	}

	// Key recovery: a new key signs in; list shows both; revoking the lost one refuses it.
	out = cli.ok(t, "keys", "add", "--owner", alice.OwnerID, "--name", "recovered")
	newKey := regexp.MustCompile(`API key: (stw_\S+)`).FindStringSubmatch(out)
	if newKey == nil || status(newKey[1]) != http.StatusOK {
		t.Fatalf("remote keys add: %q; want a key the api function accepts", out)
	}
	var keys []store.APIKey
	if out = cli.ok(t, "keys", "list", "--owner", alice.OwnerID, "--json"); json.Unmarshal([]byte(out), &keys) != nil || len(keys) != 2 {
		t.Fatalf("remote keys list --json: %q; want two keys", out)
	}
	var lost string
	for _, k := range keys {
		if k.Name != "recovered" {
			lost = k.ID.String()
		}
	}
	if out = cli.ok(t, "keys", "revoke", "--owner", alice.OwnerID, lost); !strings.Contains(out, "Revoked key "+lost) {
		t.Fatalf("remote keys revoke: %q", out)
	}
	api = startAPI()
	if code := status(alice.APIKey); code != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", code)
	}
	if status(newKey[1]) != http.StatusOK {
		t.Error("the recovered key stopped working with the other's revocation")
	}
	if out, err := cli.run(t, "keys", "revoke", "--owner", alice.OwnerID, uuid.NewString()); err == nil || !strings.Contains(out, "no such active key") {
		t.Errorf("revoking a key that does not exist: %v\n%s", err, out)
	}

	// The kill switches: the deployment's and one owner's, in status, then released.
	cli.ok(t, "control", "stop", "--reason", "maintenance")
	cli.ok(t, "control", "stop", "--owner", alice.OwnerID, "--reason", "runaway costs")
	var st store.ControlStatus
	if out = cli.ok(t, "control", "status", "--json"); json.Unmarshal([]byte(out), &st) != nil || !st.Stopped || st.Reason != "maintenance" ||
		len(st.StoppedOwners) != 1 || st.StoppedOwners[0].OwnerID.String() != alice.OwnerID {
		t.Fatalf("remote control status --json after both stops: %q", out)
	}
	if db, err := door.Control(context.Background()); err != nil || !db.Stopped {
		t.Fatalf("the database's switch after remote control stop: %+v, %v", db, err)
	}
	if out = cli.ok(t, "control", "status"); !strings.Contains(out, "deployment: STOPPED") || !strings.Contains(out, "runaway costs") {
		t.Fatalf("remote control status: %q", out)
	}
	cli.ok(t, "control", "resume")
	cli.ok(t, "control", "resume", "--owner", alice.OwnerID)
	if out = cli.ok(t, "control", "status", "--json"); json.Unmarshal([]byte(out), &st) != nil || st.Stopped || len(st.StoppedOwners) != 0 {
		t.Fatalf("remote control status --json after resume: %q", out)
	}

	// Households: bob and alice in one, a policy naming bob as alice's approver, listed and
	// removed; the database holds the membership.
	var bob struct {
		OwnerID string `json:"owner_id"`
	}
	if out = cli.ok(t, "owners", "add", "bob", "--json"); json.Unmarshal([]byte(out), &bob) != nil || bob.OwnerID == "" {
		t.Fatalf("remote owners add bob: %q", out)
	}
	cli.ok(t, "households", "create", "home")
	cli.ok(t, "households", "add", "home", alice.OwnerID)
	cli.ok(t, "households", "add", "home", bob.OwnerID)
	if out = cli.ok(t, "households", "list"); !strings.Contains(out, "alice") || !strings.Contains(out, "bob") || !strings.Contains(out, "home") {
		t.Fatalf("remote households list: %q", out)
	}
	out = cli.ok(t, "households", "policy", "add", "home", "--tool", "send_email", "--approvers", bob.OwnerID)
	policy := regexp.MustCompile(`Added policy (\S+):`).FindStringSubmatch(out)
	if policy == nil {
		t.Fatalf("remote households policy add: %q", out)
	}
	var policies []store.HouseholdPolicy
	if out = cli.ok(t, "households", "policy", "list", "home", "--json"); json.Unmarshal([]byte(out), &policies) != nil || len(policies) != 1 ||
		policies[0].Tool != "send_email" || len(policies[0].Approvers) != 1 || policies[0].Approvers[0].String() != bob.OwnerID {
		t.Fatalf("remote households policy list --json: %q", out)
	}
	cli.ok(t, "households", "policy", "remove", "home", policy[1])
	cli.ok(t, "households", "remove", "home", bob.OwnerID)
	hs, err := door.ListHouseholds(context.Background())
	if err != nil || len(hs) != 1 || len(hs[0].Members) != 1 || hs[0].Members[0].Name != "alice" {
		t.Fatalf("households in the database: %+v (%v); want home with alice", hs, err)
	}
	if ps, err := door.ListHouseholdPolicies(context.Background(), "home"); err != nil || len(ps) != 0 {
		t.Fatalf("home's policies after remove: %+v (%v)", ps, err)
	}
	if out, err := cli.run(t, "households", "add", "nowhere", bob.OwnerID); err == nil || !strings.Contains(out, "steward: remote households: households add:") {
		t.Errorf("adding to a household that does not exist: %v\n%s", err, out)
	}

	// Briefing schedules: added (with the standing notify rule --allow-notify asks for), listed,
	// removed; a bad cron expression is refused in words and adds nothing.
	out = cli.ok(t, "jobs", "add", "morning-briefing", "--owner", alice.OwnerID, "--cron", "0 7 * * *", "--tz", "Europe/Paris", "--allow-notify")
	if !strings.Contains(out, `scheduled morning-briefing: "0 7 * * *" in Europe/Paris`) || !strings.Contains(out, "added standing rule") {
		t.Fatalf("remote jobs add: %q", out)
	}
	var scheds []struct{ Job, Cron, Timezone string }
	if out = cli.ok(t, "jobs", "list", "--owner", alice.OwnerID, "--json"); json.Unmarshal([]byte(out), &scheds) != nil || len(scheds) != 1 ||
		scheds[0].Job != "morning-briefing" || scheds[0].Timezone != "Europe/Paris" {
		t.Fatalf("remote jobs list --json: %q", out)
	}
	if out, err := cli.run(t, "jobs", "add", "weekly-review", "--owner", alice.OwnerID, "--cron", "every monday"); err == nil || !strings.Contains(out, "steward: remote jobs: jobs add:") {
		t.Errorf("a bad cron expression: %v\n%s", err, out)
	}
	if out, err := cli.run(t, "jobs", "list"); err == nil || !strings.Contains(out, "there are 2 owners") {
		t.Errorf("remote jobs list without --owner among two owners: %v\n%s", err, out)
	}
	cli.ok(t, "jobs", "remove", "morning-briefing", "--owner", alice.OwnerID)
	if out = cli.ok(t, "jobs", "list", "--owner", alice.OwnerID, "--json"); strings.TrimSpace(out) != "null" && strings.TrimSpace(out) != "[]" {
		t.Fatalf("remote jobs list after remove: %q", out)
	}
	if out, err := cli.run(t, "jobs", "run", "morning-briefing", "--owner", alice.OwnerID); err == nil || !strings.Contains(out, "runs locally only") {
		t.Errorf("remote jobs run: %v\n%s; want a refusal naming the scheduler", err, out)
	}

	// An incoming webhook: its id and secret printed once, its row in the database.
	var hook struct {
		HookID string `json:"hook_id"`
		Secret string `json:"secret"`
	}
	if out = cli.ok(t, "webhooks", "add", "--owner", alice.OwnerID, "--source", "github", "--json"); json.Unmarshal([]byte(out), &hook) != nil ||
		!strings.HasPrefix(hook.HookID, "wh_") || !strings.HasPrefix(hook.Secret, "whsec_") {
		t.Fatalf("remote webhooks add --json: %q", out)
	}
	if n := count(t, d.super, "SELECT count(*) FROM webhooks WHERE hook_id = '"+hook.HookID+"' AND owner_id = '"+alice.OwnerID+"'"); n != 1 {
		t.Errorf("webhook %s in the database: %d rows, want 1", hook.HookID, n)
	}

	// A CLI from before the operator's service sends owners-add; it still creates an owner.
	var old struct {
		OwnerID string `json:"owner_id"`
		APIKey  string `json:"api_key"`
	}
	if b := migrate.invoke(t, map[string]string{"action": "owners-add", "name": "carol"}); json.Unmarshal(b, &old) != nil || old.APIKey == "" || status(old.APIKey) != http.StatusOK {
		t.Errorf("the owners-add action: %s; want carol's key, which signs in", b)
	}

	// A bad command line is the CLI's usage error, and nothing is invoked.
	if out, err := cli.run(t, "keys", "list"); err == nil || !strings.Contains(out, "--owner ID is required") {
		t.Errorf("remote keys list without --owner: %v\n%s", err, out)
	}
}

// count is the one number sql selects, as the superuser.
func count(t *testing.T, dbURL, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
