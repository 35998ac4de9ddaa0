package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

func TestControlStopResumeStatus(t *testing.T) {
	t.Parallel()
	db := testdb.Open(t, 2)
	env := dbEnv(db.DB)
	ctx := context.Background()
	s := db.Store
	owner, _ := db.Owner(t, "alice")
	controls := func() steward.Controls {
		var c steward.Controls
		if err := s.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
			var err error
			c, err = tx.Safety.Controls(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return c
	}

	wantOK(t, runCLI(t, env, "control", "stop", "--reason", "incident 42"))
	if c := controls(); !c.GlobalKilled || c.GlobalReason != "incident 42" {
		t.Fatalf("after global stop: %+v", c)
	}
	wantOK(t, runCLI(t, env, "control", "stop", "--owner", owner.ID.String(), "--reason", "card lost"))
	r := runCLI(t, env, "control", "status", "--json")
	wantOK(t, r)
	var st store.ControlStatus
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || !st.Stopped || len(st.StoppedOwners) != 1 || st.StoppedOwners[0].Reason != "card lost" {
		t.Fatalf("status: %s (%v)", r.stdout, err)
	}
	wantOK(t, runCLI(t, env, "control", "resume"))
	wantOK(t, runCLI(t, env, "control", "resume", "--owner", owner.ID.String()))
	if c := controls(); c.GlobalKilled || c.OwnerKilled {
		t.Fatalf("after resume: %+v", c)
	}
	r = runCLI(t, env, "control", "status")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "deployment: running") {
		t.Fatalf("status: %s", r.stdout)
	}
	if r := runCLI(t, env, "control", "stop", "--owner", "not-a-uuid"); r.code != 2 {
		t.Fatalf("bad owner id: exit %d", r.code)
	}
	wantOneLineError(t, runCLI(t, env, "control", "stop", "--owner", "00000000-0000-0000-0000-000000000001"), "not found")
}
