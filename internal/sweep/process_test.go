package sweep_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/sweep"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestSweepReleasesTurnsOfAGoneProcess: three running turns under 15-minute leases — one held
// by this process, one by a process of this host that is gone (its id reused by nobody, or
// by a process started at another time), one by another host. The sweep of this process
// fails the gone process's turns at once and leaves the others to their leases.
func TestSweepReleasesTurnsOfAGoneProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 2)
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	defer door.Close()
	alice, _ := o.Owner(t, "alice")
	me := sweep.Process()
	host, pid, _ := strings.Cut(me, "/")
	if host == "" || pid == "" {
		t.Fatalf("Process() = %q: want host/pid/start on Linux", me)
	}
	pid, start, _ := strings.Cut(pid, "/")
	holders := map[string]string{
		"mine":       me,
		"no process": host + "/2147483646/1",
		"pid reused": host + "/" + pid + "/" + start + "0",
		"elsewhere":  "another-host/" + strconv.Itoa(os.Getpid()) + "/1",
	}
	turns := map[string]uuid.UUID{}
	for name, holder := range holders {
		o.Store.HoldAs(holder)
		turns[name] = running(t, o.Store, alice.ID)
	}
	sw := &sweep.Sweeper{Store: o.Store, Owners: door, Now: time.Now, Process: me, Held: door}
	swept, err := sw.Sweep(ctx)
	if err != nil || swept.StaleTurns != 2 {
		t.Fatalf("sweep = %+v, %v; want the gone process's two turns failed", swept, err)
	}
	for name, want := range map[string]steward.Status{"mine": steward.StatusRunning, "no process": steward.StatusFailed,
		"pid reused": steward.StatusFailed, "elsewhere": steward.StatusRunning} {
		if got := status(t, o.Store, alice.ID, turns[name]); got != want {
			t.Errorf("%s's turn is %s; want %s", name, got, want)
		}
	}
}

// running starts a turn of owner under a 15-minute lease.
func running(t *testing.T, s *store.Store, owner uuid.UUID) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := s.WithOwner(context.Background(), owner, func(tx *store.Tx) error {
		ctx := context.Background()
		conv, err := tx.Conversations.Create(ctx, "sweep")
		if err != nil {
			return err
		}
		turn, err := tx.Turns.Create(ctx, conv.ID, steward.TriggerChat, "m", time.Now(), 15*time.Minute)
		id = turn.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
