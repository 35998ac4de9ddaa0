package memory_test

import (
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/benchcycle"
	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestOwnersItemsTakenTogether: one owner's queued exchanges that memory already holds are
// claimed, read and completed in one transaction whose statements share round trips — the
// claims, the reads that need nothing before them, the chunk lookup, the completions and
// COMMIT: five for six items, not six transactions of six round trips each — and each is done.
func TestOwnersItemsTakenTogether(t *testing.T) {
	t.Parallel()
	var proxy *benchcycle.Proxy
	var trace *testdb.Buffer
	e := newEnvAs(t, func(d testdb.DB) string {
		var u string
		u, proxy, trace = testdb.Counted(t, d.AppURL)
		return u
	})
	alice := e.owner("alice")
	milk := func() { e.turn(alice, nil, "remind me to buy milk", `Added "buy milk" to your tasks.`) }
	milk()
	if d := e.drainAll(e.worker); d.Done != 1 {
		t.Fatalf("first drain = %+v, want 1 done", d)
	}
	// Two repeats first: their transaction prepares the statements on the connection.
	milk()
	milk()
	if d := e.drainAll(e.worker); d.Done != 2 {
		t.Fatalf("second drain = %+v, want 2 done", d)
	}
	for range 6 {
		milk()
	}
	c0, t0 := proxy.Counts(), len(trace.String())
	d, err := e.worker.Drain(e.ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	c := proxy.Counts().Sub(c0)
	if d.Done != 6 || d.Retry+d.Failed+d.Skipped != 0 {
		t.Errorf("drain = %+v, want the 6 repeats done", d)
	}
	// A connection that has not run a drain yet prepares its statements first (the pool may
	// hand this drain the other connection than the warm-up's): those round trips are the
	// connection's, once, not the items'.
	var prepares int64
	for _, line := range strings.Split(trace.String()[t0:], "\n") {
		if _, rest, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(rest, "prepare ") {
			prepares++
		}
	}
	if c.RoundTrips-prepares != 5 {
		t.Errorf("draining 6 known exchanges took %d round trips (%d of them prepares, %d new connections), want 5 besides prepares\n%s", c.RoundTrips, prepares, c.Connections, trace.String())
	}
	// Each item reads the owner's unembedded facts: one statement answers all six.
	if drain := trace.String()[t0:]; strings.Count(drain, "UnembeddedFacts")-strings.Count(drain, "prepare UnembeddedFacts") != 1 {
		t.Errorf("the drain read the unembedded facts more than once:\n%s", drain)
	}
	n := 0
	for _, ch := range e.chunks(alice, "buy milk", memory.KindConversation) {
		if strings.Contains(ch.Text, "buy milk") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d chunks of the milk exchange, want 1", n)
	}
	if b := e.backlog(alice); b.Pending != 0 {
		t.Errorf("backlog after the drain = %+v, want none pending", b)
	}
}
