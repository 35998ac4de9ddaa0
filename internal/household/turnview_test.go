package household_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stewardhq/steward/internal/steward"
)

// TestTurnViewCarriesAwaiting: after the owner's confirm of a household-gated call, GET
// /v1/turns/{id} shows the same TurnView as the confirm's response, awaiting included, until
// the last member voted; before the owner decided it awaits nobody else yet.
func TestTurnViewCarriesAwaiting(t *testing.T) {
	e := setup(t, "bob", "carol")
	v := e.suspend(t)
	get := func() (steward.View, string) {
		t.Helper()
		status, body := e.do(t, e.alice, "GET", "/v1/turns/"+v.TurnID.String(), "")
		var got steward.View
		if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("GET /v1/turns/%s = %d %s", v.TurnID, status, body)
		}
		return got, body
	}
	if got, body := get(); got.Status != steward.StatusSuspended || got.Awaiting != "" {
		t.Fatalf("before alice decided: %s; want suspended, awaiting no one yet", body)
	}

	p := v.Pending[0]
	status, confirmed := e.do(t, e.alice, "POST", "/v1/turns/"+v.TurnID.String()+"/confirm",
		fmt.Sprintf(`{"decisions":[{"call_id":%q,"args_hash":%q,"approve":true}]}`, p.CallID, p.ArgsHash))
	var held steward.View
	if status != 200 || json.Unmarshal([]byte(confirmed), &held) != nil || held.Awaiting != "awaiting household approval from bob, carol" {
		t.Fatalf("alice's confirm = %d %s; want suspended, awaiting bob and carol", status, confirmed)
	}
	if _, body := get(); body != confirmed {
		t.Errorf("GET after the confirm:\n%s\nthe confirm's response:\n%s", body, confirmed)
	}

	items, _ := e.inbox(t, e.bob)
	if status, body := e.decide(t, e.bob, items[0].ID, true); status != 200 {
		t.Fatalf("bob approves = %d %s", status, body)
	}
	if got, body := get(); got.Status != steward.StatusSuspended || got.Awaiting != "awaiting household approval from carol" {
		t.Errorf("after bob approved: %s; want awaiting carol", body)
	}
	items, _ = e.inbox(t, e.carol)
	if status, body := e.decide(t, e.carol, items[0].ID, true); status != 200 {
		t.Fatalf("carol approves = %d %s", status, body)
	}
	if got, body := get(); got.Status != steward.StatusCompleted || got.Awaiting != "" {
		t.Errorf("after carol approved: %s; want completed, awaiting no one", body)
	}
}
