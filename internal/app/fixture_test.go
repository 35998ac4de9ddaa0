package app

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestModelFixturesRecordThenReplay: a turn recorded through STEWARD_MODEL_FIXTURES against
// the fake Gemini API (a create_task call, approved, then the answer) replays with the server
// stopped and no API key to the same turn: the same proposed write and the same answer.
func TestModelFixturesRecordThenReplay(t *testing.T) {
	t.Parallel()
	fake := httptest.NewServer(geminifake.New())
	file := filepath.Join(t.TempDir(), "model.json")
	turn := func(env map[string]string) (steward.View, steward.View) {
		t.Helper()
		db := testdb.New(t)
		env["APP_DATABASE_URL"], env["DOOR_DATABASE_URL"], env["STEWARD_MODEL_FIXTURES"] = db.AppURL, db.DoorURL, file
		env["GEMINI_BASE_URL"] = fake.URL
		a, err := build(context.Background(), loadConfig(t, env), settings{logOut: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		door, err := store.OpenDoor(context.Background(), db.OwnerURL)
		if err != nil {
			t.Fatal(err)
		}
		defer door.Close()
		owner, _, err := door.CreateOwner(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		v, err := a.Runner.Start(context.Background(), agent.Input{OwnerID: owner.ID, Message: "add buy milk"}, nil)
		if err != nil || v.Status != steward.StatusSuspended || len(v.Pending) != 1 {
			t.Fatalf("start: %+v %v, want suspended on one write", v, err)
		}
		done, err := a.Runner.Confirm(context.Background(), owner.ID, v.TurnID,
			[]steward.Decision{{CallID: v.Pending[0].CallID, Approve: true, ArgsHash: v.Pending[0].ArgsHash}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v, done
	}
	recorded, recordedDone := turn(map[string]string{"GEMINI_API_KEY": "AIza-test", "STEWARD_MODEL_FIXTURES_MODE": "record"})
	fake.Close()
	replayed, replayedDone := turn(map[string]string{})
	if replayed.Pending[0].Tool != recorded.Pending[0].Tool || string(replayed.Pending[0].Args) != string(recorded.Pending[0].Args) {
		t.Errorf("replayed proposal %+v, recorded %+v", replayed.Pending[0], recorded.Pending[0])
	}
	if replayedDone.Status != steward.StatusCompleted || replayedDone.Answer == "" || replayedDone.Answer != recordedDone.Answer {
		t.Errorf("replayed %s %q, recorded %s %q", replayedDone.Status, replayedDone.Answer, recordedDone.Status, recordedDone.Answer)
	}
}
