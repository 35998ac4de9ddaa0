package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestOwnersBudget sets an owner's daily limits with the CLI and sees the API enforce and
// show them (issue 9.3).
func TestOwnersBudget(t *testing.T) {
	t.Parallel()
	app := apptest.New(t, apptest.Options{Model: scripted.New(scripted.Reply(scripted.Text("Hi!"))), MaxConns: 5})
	db, srv := app.DB, app.Server
	owner, key := db.Owner(t, "alice")
	env := dbEnv(db.DB)
	id := owner.ID.String()

	r := runCLI(t, env, "owners", "budget", "--owner", id, "--messages", "1", "--cost-usd", "0.25")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "1 message a day") || !strings.Contains(r.stdout, "$0.25 a day") {
		t.Fatalf("budget output: %s", r.stdout)
	}
	// One flag changes one limit; --json shows both, the cost exactly in micros.
	r = runCLI(t, env, "owners", "budget", "--owner", id, "--cost-usd", "4.35", "--json")
	wantOK(t, r)
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if got["owner_id"] != id || got["message_limit"] != 1.0 || got["cost_limit_micros"] != 4350000.0 || got["cost_limit_usd"] != 4.35 {
		t.Fatalf("budget --json = %s", r.stdout)
	}

	send := func(path, method, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := send("/v1/chat", "POST", `{"message":"hello"}`); code != http.StatusOK {
		t.Fatalf("first chat: %d %s", code, body)
	}
	code, body := send("/v1/chat", "POST", `{"message":"again"}`)
	if code != http.StatusTooManyRequests || !strings.Contains(body, `"code":"over_budget"`) || !strings.Contains(body, "daily message quota of 1") {
		t.Fatalf("chat beyond the limit: %d %s", code, body)
	}
	code, body = send("/v1/control", "GET", "")
	var ctl struct {
		Budget struct {
			MessagesToday *int     `json:"messages_today"`
			MessageLimit  *int     `json:"message_limit"`
			CostToday     *float64 `json:"cost_usd_today"`
			CostLimit     *float64 `json:"cost_limit_usd"`
		} `json:"budget"`
	}
	if err := json.Unmarshal([]byte(body), &ctl); err != nil || code != http.StatusOK || ctl.Budget.MessagesToday == nil || *ctl.Budget.MessagesToday != 1 ||
		ctl.Budget.MessageLimit == nil || *ctl.Budget.MessageLimit != 1 || ctl.Budget.CostToday == nil || ctl.Budget.CostLimit == nil || *ctl.Budget.CostLimit != 4.35 {
		t.Fatalf("GET /v1/control: %d %s", code, body)
	}
}

func TestOwnersBudgetRejectsBadInput(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 2)
	owner, _ := db.Owner(t, "alice")
	env := dbEnv(db.DB)
	id := owner.ID.String()
	usage := map[string][]string{
		"neither flag": {"owners", "budget", "--owner", id},
		"no owner":     {"owners", "budget", "--messages", "3"},
	}
	for name, args := range usage {
		if r := runCLI(t, env, args...); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
			t.Errorf("%s: exit %d, stderr %s", name, r.code, r.stderr)
		}
	}
	bad := map[string]struct {
		args []string
		want string
	}{
		"negative messages": {[]string{"--messages", "-1"}, "--messages must be a whole number from 0"},
		"fractional":        {[]string{"--messages", "1.5"}, "--messages must be a whole number from 0"},
		"huge messages":     {[]string{"--messages", "99999999999"}, "--messages must be a whole number from 0"},
		"negative cost":     {[]string{"--cost-usd", "-1"}, "--cost-usd must be a dollar amount"},
		"seven decimals":    {[]string{"--cost-usd", "0.0000001"}, "at most 6 decimals"},
		"exponent":          {[]string{"--cost-usd", "1e3"}, "--cost-usd must be a dollar amount"},
		"words":             {[]string{"--cost-usd", "five"}, "--cost-usd must be a dollar amount"},
		"too much":          {[]string{"--cost-usd", "1000000.01"}, "at most $1000000"},
	}
	for name, tc := range bad {
		r := runCLI(t, env, append([]string{"owners", "budget", "--owner", id}, tc.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, want one line with %q", name, r.code, r.stderr, tc.want)
		}
	}
	wantOneLineError(t, runCLI(t, env, "owners", "budget", "--owner", uuid.NewString(), "--messages", "3"), "not found")
	// Nothing above changed the defaults.
	r := runCLI(t, env, "owners", "budget", "--owner", id, "--messages", "500", "--json")
	wantOK(t, r)
	if !strings.Contains(r.stdout, `"cost_limit_micros":5000000`) {
		t.Fatalf("limits changed by rejected input: %s", r.stdout)
	}
}

// TestDeploymentCostCap: the deployment-wide daily cost cap, which refuses every owner once
// reached, has its knobs: `steward control cap USD` sets it, `control status` shows it,
// STEWARD_DAILY_COST_CAP_USD sets it at `migrate up` (as the migrate function does on every
// deploy), and the refusal names the cap and those knobs.
func TestDeploymentCostCap(t *testing.T) {
	t.Parallel()
	app := apptest.New(t, apptest.Options{Model: scripted.New(scripted.Reply(scripted.Text("Hi!"))), MaxConns: 5})
	_, key := app.DB.Owner(t, "alice")
	env := dbEnv(app.DB.DB)

	r := runCLI(t, env, "control", "cap", "75")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "$75.00") {
		t.Fatalf("control cap 75: %s", r.stdout)
	}
	if r = runCLI(t, env, "control", "status"); !strings.Contains(r.stdout, "of a $75.00 daily cap") {
		t.Fatalf("control status after cap 75: %s", r.stdout)
	}
	wantOneLineError(t, runCLI(t, env, "control", "cap", "1e3"), "must be a dollar amount")
	wantOneLineError(t, runCLI(t, env, "control", "cap", "lots"), "must be a dollar amount")

	env["STEWARD_DAILY_COST_CAP_USD"] = "0"
	wantOK(t, runCLI(t, env, "migrate", "up"))
	if r = runCLI(t, env, "control", "status"); !strings.Contains(r.stdout, "of a $0.00 daily cap") {
		t.Fatalf("control status after migrate up with STEWARD_DAILY_COST_CAP_USD=0: %s", r.stdout)
	}
	req, _ := http.NewRequest("POST", app.Server.URL+"/v1/chat", strings.NewReader(`{"message":"hello"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "$0.00") ||
		!strings.Contains(string(b), "STEWARD_DAILY_COST_CAP_USD") || !strings.Contains(string(b), "steward control cap") {
		t.Fatalf("chat over the deployment's cap: %d %s", resp.StatusCode, b)
	}

	env["STEWARD_DAILY_COST_CAP_USD"] = "fifty"
	wantOneLineError(t, runCLI(t, env, "control", "status"), "STEWARD_DAILY_COST_CAP_USD")
}
