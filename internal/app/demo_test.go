package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestDemoModelReadsOnlyTheOwnersWords is a newcomer's first minutes with `make run` and
// `steward chat` (issue 9, defect 1): the first message is ingested into memory, and the
// second one, whose turn recalls the first, is still read as the owner wrote it — the
// recalled memory block is context, not something the owner said.
func TestDemoModelReadsOnlyTheOwnersWords(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	a, err := build(ctx, loadConfig(t, map[string]string{"DATABASE_URL": db.OwnerURL, "APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL}),
		settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	owner, key, err := adminDoor(t, &db).CreateOwner(ctx, "newcomer")
	if err != nil {
		t.Fatal(err)
	}
	chat := func(msg string) steward.View {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"message": msg})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v steward.View
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/chat %q = %d, %v", msg, resp.StatusCode, err)
		}
		return v
	}

	if v := chat("what time is it"); v.Status != steward.StatusCompleted || !strings.HasPrefix(v.Answer, "It is ") {
		t.Fatalf("first message: %+v, want the time", v)
	}
	d, err := a.MemoryWorker.Drain(ctx, 10)
	if err != nil || d.Done != 1 {
		t.Fatalf("memory ingestion: %+v, %v; want the first exchange ingested", d, err)
	}
	hits, err := a.Memory.Search(ctx, owner.ID, "what time is it", 5)
	if err != nil || len(hits) == 0 {
		t.Fatalf("memory search: %v, %v; want the first exchange remembered (the case proves nothing otherwise)", hits, err)
	}

	v := chat("remind me to call the dentist")
	if v.Status != steward.StatusSuspended || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
		t.Fatalf("second message: status %s, answer %q, pending %+v; want suspended on create_task", v.Status, v.Answer, v.Pending)
	}
	var args struct{ Title string }
	if err := json.Unmarshal(v.Pending[0].Args, &args); err != nil || args.Title != "call the dentist" {
		t.Errorf("create_task args = %s, want the title %q", v.Pending[0].Args, "call the dentist")
	}
}
