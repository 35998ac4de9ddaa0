package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/autonomy"
	"github.com/stewardhq/steward/internal/operator"
	"github.com/stewardhq/steward/internal/store"
)

// viaFunction is the Remote an operator's CLI uses, its Invoke sending each call as the
// migrate function receives it — JSON over the wire, answered by Serve over a Local
// service — and the reply back as JSON, an error as its words only.
func viaFunction(t *testing.T, local operator.Service) operator.Service {
	t.Helper()
	return operator.RemoteService(operator.Remote{Invoke: func(ctx context.Context, c operator.Call) (operator.Reply, error) {
		var sent operator.Call
		wire, err := json.Marshal(c)
		if err != nil || json.Unmarshal(wire, &sent) != nil {
			t.Fatalf("the call %+v does not cross the wire: %v", c, err)
		}
		rep, err := operator.Serve(ctx, local, sent)
		if err != nil {
			return operator.Reply{}, errors.New(err.Error())
		}
		var got operator.Reply
		wire, err = json.Marshal(rep)
		if err != nil || json.Unmarshal(wire, &got) != nil {
			t.Fatalf("the reply %+v does not cross the wire: %v", rep, err)
		}
		return got, nil
	}})
}

// TestOperator runs the operator's tests over one app (its database, door and scheduler).
func TestOperator(t *testing.T) {
	e := apptest.New(t, apptest.Options{})
	t.Run("RemoteDoesWhatLocalDoes", func(t *testing.T) { remoteDoesWhatLocalDoes(t, e) })
	t.Run("Mistakes", func(t *testing.T) { mistakes(t, e) })
}

// remoteDoesWhatLocalDoes: each command an operator runs through the
// deployment's function does what it does over a local connection — owners and their keys,
// budgets, the kill switches and cost cap, households and their policies, job schedules and
// webhooks — against the real database.
func remoteDoesWhatLocalDoes(t *testing.T, e *apptest.Env) {
	ctx := context.Background()
	op := viaFunction(t, operator.LocalService(operator.Local{Door: e.DB.Door, Jobs: e.App.Scheduler}))

	alice, key, err := op.CreateOwner(ctx, "alice")
	if err != nil || alice.Name != "alice" || alice.ID == uuid.Nil || !strings.HasPrefix(key, "stw_") {
		t.Fatalf("create owner = %+v, key %q, %v", alice, key, err)
	}
	if p, err := e.DB.Door.Authenticate(ctx, key); err != nil || p.OwnerID != alice.ID {
		t.Errorf("the key the function returned does not open the door: %+v, %v", p, err)
	}
	bob, _, err := op.CreateOwner(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	owners, err := op.ListOwners(ctx)
	named := map[uuid.UUID]string{}
	for _, o := range owners {
		named[o.ID] = o.Name
	}
	if err != nil || named[alice.ID] != "alice" || named[bob.ID] != "bob" {
		t.Errorf("owners = %+v, %v; want alice and bob among them", owners, err)
	}

	second, meta, err := op.AddKey(ctx, alice.ID, "laptop")
	if err != nil || meta.Name != "laptop" || second == key {
		t.Fatalf("add key = %q %+v, %v", second, meta, err)
	}
	if err := op.RevokeKey(ctx, alice.ID, meta.ID); err != nil {
		t.Fatal(err)
	}
	keys, err := op.ListKeys(ctx, alice.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys = %+v, %v; want the first and the revoked one", keys, err)
	}
	for _, k := range keys {
		if (k.ID == meta.ID) != (k.RevokedAt != nil) {
			t.Errorf("key %s revoked at %v; want only the laptop's revoked", k.Name, k.RevokedAt)
		}
	}
	if _, err := e.DB.Door.Authenticate(ctx, second); err == nil {
		t.Error("a revoked key still opens the door")
	}

	messages := int32(12)
	limits, err := op.SetBudget(ctx, alice.ID, &messages, nil)
	if err != nil || limits.Messages != 12 {
		t.Errorf("set budget = %+v, %v; want 12 messages a day", limits, err)
	}

	if err := op.SetKill(ctx, bob.ID, true, "lost phone"); err != nil {
		t.Fatal(err)
	}
	if err := op.SetCostCap(ctx, 5_000_000); err != nil {
		t.Fatal(err)
	}
	st, err := op.Status(ctx)
	if err != nil || st.Stopped || st.CostCapMicros != 5_000_000 || len(st.StoppedOwners) != 1 || st.StoppedOwners[0].OwnerID != bob.ID {
		t.Errorf("status = %+v, %v; want running, the 5 dollar cap, bob stopped", st, err)
	}

	if _, err := op.CreateHousehold(ctx, "home"); err != nil {
		t.Fatal(err)
	}
	for _, o := range []uuid.UUID{alice.ID, bob.ID} {
		if err := op.SetHouseholdMember(ctx, "home", o, true); err != nil {
			t.Fatal(err)
		}
	}
	min := int64(10000)
	policy, err := op.AddHouseholdPolicy(ctx, store.HouseholdPolicy{Household: "home", Tool: "record_expense", MinAmountMinor: &min,
		Currency: "EUR", Approvers: []uuid.UUID{bob.ID}})
	if err != nil {
		t.Fatal(err)
	}
	homes, err := op.ListHouseholds(ctx)
	if err != nil || len(homes) != 1 || len(homes[0].Members) != 2 {
		t.Errorf("households = %+v, %v; want home with two members", homes, err)
	}
	if err := op.RemoveHouseholdPolicy(ctx, "home", policy.ID); err != nil {
		t.Fatal(err)
	}
	if ps, err := op.ListHouseholdPolicies(ctx, "home"); err != nil || len(ps) != 0 {
		t.Errorf("policies after removal = %+v, %v", ps, err)
	}

	job, rule, err := op.AddJob(ctx, alice.ID, autonomy.JobMorningBriefing, "0 7 * * *", "Europe/Berlin", nil, true)
	if err != nil || job.Job != autonomy.JobMorningBriefing || job.Next == nil || rule == nil || rule.Tool != "notify" {
		t.Fatalf("add job = %+v, rule %+v, %v; want the briefing scheduled with the notify rule", job, rule, err)
	}
	if jobs, err := op.ListJobs(ctx, alice.ID); err != nil || len(jobs) != 1 {
		t.Errorf("jobs = %+v, %v", jobs, err)
	}
	if err := op.RemoveJob(ctx, alice.ID, autonomy.JobMorningBriefing); err != nil {
		t.Fatal(err)
	}
	if jobs, err := op.ListJobs(ctx, alice.ID); err != nil || len(jobs) != 0 {
		t.Errorf("jobs after removal = %+v, %v", jobs, err)
	}
	if hook, err := op.CreateWebhook(ctx, alice.ID, "github"); err != nil || hook.Secret == "" {
		t.Errorf("create webhook = %+v, %v; want its secret, once", hook, err)
	}
}

// mistakes: what goes wrong reaches the operator in words — a job that does not
// exist names the jobs there are, a service built without the scheduler says so, a method
// the deployment does not know says to upgrade, a reply missing its answer says the
// deployment is older than the CLI — and none of it is a panic.
func mistakes(t *testing.T, e *apptest.Env) {
	ctx := context.Background()
	owner, _ := e.DB.Owner(t, "dora")
	op := viaFunction(t, operator.LocalService(operator.Local{Door: e.DB.Door, Jobs: e.App.Scheduler}))
	if _, _, err := op.AddJob(ctx, owner.ID, "daily-horoscope", "0 7 * * *", "UTC", nil, false); err == nil ||
		!strings.Contains(err.Error(), autonomy.JobMorningBriefing) {
		t.Errorf("an unknown job = %v; want the error to name the jobs there are", err)
	}
	if _, _, err := op.AddJob(ctx, owner.ID, autonomy.JobMorningBriefing, "at dawn", "UTC", nil, false); err == nil {
		t.Error("a schedule that is not a cron expression was accepted")
	}
	if _, err := op.CreateHousehold(ctx, "Not A Name!"); err == nil {
		t.Error("a household name with spaces and capitals was accepted")
	}

	noJobs := viaFunction(t, operator.LocalService(operator.Local{Door: e.DB.Door}))
	if _, err := noJobs.ListJobs(ctx, owner.ID); err == nil || !strings.Contains(err.Error(), "without") {
		t.Errorf("jobs without a scheduler = %v; want an error saying the service has none", err)
	}
	for _, m := range []string{operator.MethodListJobs, operator.MethodAddJob, operator.MethodRemoveJob, operator.MethodCreateWebhook} {
		if !operator.NeedsJobs(m) {
			t.Errorf("%s does not say it needs the scheduler", m)
		}
	}
	if operator.NeedsJobs(operator.MethodCreateOwner) {
		t.Error("create-owner says it needs the scheduler")
	}

	local := operator.LocalService(operator.Local{Door: e.DB.Door})
	if _, err := operator.Serve(ctx, local, operator.Call{Method: "rename-owner"}); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("an unknown method = %v; want it named, with the advice to upgrade", err)
	}
	for _, c := range []operator.Call{{Method: operator.MethodSetCostCap}, {Method: operator.MethodAddHouseholdPolicy, Household: "home"}} {
		if _, err := operator.Serve(ctx, local, c); err == nil || !strings.Contains(err.Error(), c.Method) {
			t.Errorf("%s with its argument missing = %v; want an error naming the method", c.Method, err)
		}
	}

	old := operator.RemoteService(operator.Remote{Invoke: func(context.Context, operator.Call) (operator.Reply, error) {
		return operator.Reply{}, nil // an older deployment: it knows the method but sends nothing back
	}})
	if _, _, err := old.CreateOwner(ctx, "carol"); err == nil || !strings.Contains(err.Error(), "older than this CLI") {
		t.Errorf("an empty reply = %v; want the error to say the deployment is older", err)
	}
}
