package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	. "github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// probeMemory: through every memory method, bob sees, changes and claims none of alice's
// rows. Part of TestIsolation's "store queries", so it runs in both passes.
func probeMemory(t *testing.T, ctx context.Context, s *Store, a, b seeded) {
	covers("Memory.AddFactChunk", "Outbox.ClaimIngest", "Outbox.CompleteIngest", "Memory.ConversationChunks", "Outbox.FailIngest", "Outbox.IngestBacklog", "Memory.MatchFacts", "Memory.MemoryFacts", "Memory.NearestChunks", "Outbox.ReleaseIngest", "Memory.StaleConversations", "Memory.SupersedeChunks", "Memory.SupersedeNearDuplicates", "Memory.UnembeddedFacts", "Memory.KnownChunkTexts", "Memory.AddChunkOnce")
	err := s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		chunks, err := tx.Memory.NearestChunks(ctx, a.vector, 10)
		if err != nil || len(chunks) != 1 || chunks[0].ID != b.chunk {
			t.Errorf("memory_chunks nearest: bob sees %+v (err %v), want only his own", chunks, err)
		}
		facts, err := tx.Memory.MemoryFacts(ctx, 100)
		if err != nil || len(facts) != 1 || facts[0].ID != b.fact {
			t.Errorf("memory_facts list: bob sees %+v (err %v)", facts, err)
		}
		facts, err = tx.Memory.MatchFacts(ctx, []string{"shared", "words"}, 100)
		if err != nil || len(facts) != 1 || facts[0].ID != b.fact {
			t.Errorf("memory_facts match: bob sees %+v (err %v)", facts, err)
		}
		facts, err = tx.Memory.UnembeddedFacts(ctx, 100)
		if err != nil || len(facts) != 1 || facts[0].ID != b.fact {
			t.Errorf("memory_facts unembedded: bob sees %+v (err %v)", facts, err)
		}
		if added, err := tx.Memory.AddFactChunk(ctx, a.fact, "planted", a.vector); err != nil || added {
			t.Errorf("memory_chunks add for alice's fact: added %v (err %v)", added, err)
		}
		if _, err := tx.Outbox.ClaimIngest(ctx, a.ingest, time.Now(), time.Minute); !errors.Is(err, ErrConflict) {
			t.Errorf("memory_outbox claim of alice's item: %v, want conflict", err)
		}
		theirs := Ingest{ID: a.ingest}
		for what, err := range map[string]error{
			"complete": tx.Outbox.CompleteIngest(ctx, theirs),
			"fail":     tx.Outbox.FailIngest(ctx, theirs, "x", time.Now(), true),
			"release":  tx.Outbox.ReleaseIngest(ctx, theirs),
		} {
			if !errors.Is(err, ErrConflict) {
				t.Errorf("memory_outbox %s of alice's item: %v, want conflict", what, err)
			}
		}
		backlog, err := tx.Outbox.IngestBacklog(ctx)
		if err != nil || backlog.Pending != 1 {
			t.Errorf("memory_outbox backlog: bob counts %+v (err %v), want his own 1", backlog, err)
		}
		if ids, err := tx.Memory.SupersedeNearDuplicates(ctx, 2, 100); err != nil || len(ids) != 0 {
			t.Errorf("memory_chunks near duplicates: bob superseded %v (err %v)", ids, err)
		}
		stale, err := tx.Memory.StaleConversations(ctx, time.Now().Add(time.Hour), 1, 100)
		if err != nil || len(stale) != 0 {
			t.Errorf("stale conversations: bob sees %+v (err %v)", stale, err)
		}
		chunks, err = tx.Memory.ConversationChunks(ctx, a.conv, 100)
		if err != nil || len(chunks) != 0 {
			t.Errorf("conversation chunks of alice's conversation: bob sees %+v (err %v)", chunks, err)
		}
		if err := tx.Memory.SupersedeChunks(ctx, []uuid.UUID{a.chunk}); !errors.Is(err, ErrConflict) {
			t.Errorf("memory_chunks supersede alice's: %v, want conflict", err)
		}
		if known, err := tx.Memory.KnownChunkTexts(ctx, "conversation", OriginOwner, []string{"chunk of alice", "chunk of bob"}); err != nil || known["chunk of alice"] || !known["chunk of bob"] {
			t.Errorf("memory_chunks known texts: bob knows %v (err %v), want only his own", known, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Alice's identical words do not stop bob storing his own (rolled back: the seeded rows
	// stay as the other probes expect them).
	rollback := errors.New("roll back")
	err = s.WithOwner(ctx, b.owner.ID, func(tx *Tx) error {
		if added, err := tx.Memory.AddChunkOnce(ctx, "conversation", "", OriginOwner, "chunk of alice", b.vector); err != nil || !added {
			t.Errorf("memory_chunks add once: bob's chunk with alice's words added %v (err %v), want added", added, err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	err = s.WithOwner(ctx, a.owner.ID, func(tx *Tx) error {
		chunks, err := tx.Memory.NearestChunks(ctx, a.vector, 10)
		if err != nil || len(chunks) != 1 || chunks[0].ID != a.chunk {
			t.Errorf("alice's chunk after bob: %+v, %v", chunks, err)
		}
		backlog, err := tx.Outbox.IngestBacklog(ctx)
		if err != nil || backlog.Pending != 1 {
			t.Errorf("alice's outbox after bob: %+v, %v", backlog, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFilteredVectorSearchReturnsK: an owner holding a tenth of the chunks still gets k rows
// from an HNSW search filtered to them, because WithOwner enables iterative index scans.
// Without them (the control) the index's first ef_search candidates are mostly other
// owners' and the search comes back short. memory_chunks is hash-partitioned by owner
// (migration 00024), so this holds for owners whose chunks share a partition: the small owner
// is created until it hashes to the big one's.
func TestFilteredVectorSearchReturnsK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t, 2)
	d, s, door := db.DB, db.Store, db.Door
	big, _, err := door.CreateOwner(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	su, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	partition := func(owner uuid.UUID) string {
		var p string
		if err := su.QueryRow(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = 'memory_chunks'::regclass
				AND satisfies_hash_partition('memory_chunks'::regclass, 16, substring(c.relname FROM 'p(\d+)$')::int, $1::uuid)`,
			owner).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var small Owner
	for i := 0; small.ID == uuid.Nil || partition(small.ID) != partition(big.ID); i++ {
		if i == 200 {
			t.Fatal("no owner hashed to the big owner's partition in 200 tries")
		}
		if small, _, err = door.CreateOwner(ctx, fmt.Sprintf("small%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Bulk load without the HNSW index, then build it (faster than 1,000 index inserts), and
	// leave the planner only that index, as on a large table.
	if _, err := su.Exec(ctx, `DROP INDEX memory_chunks_embedding`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// The small owner has as many chunks as nearest_chunks searches through the index
	// (migration 00042: below 500 it sorts them all, exactly), a tenth of the partition's.
	fill := func(owner uuid.UUID, n int) {
		if _, err := su.Exec(ctx, `INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, origin)
			SELECT $1, 'conversation', '', 'chunk', (SELECT array_agg(random() - 0.5)::vector FROM generate_series(1, 768) WHERE g > 0), 'owner'
			FROM generate_series(1, $2::int) g`, owner, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := su.Exec(ctx, `SELECT setseed(0.42)`); err != nil {
		t.Fatal(err)
	}
	fill(big.ID, 5000)
	fill(small.ID, 500)
	if _, err := su.Exec(ctx, `CREATE INDEX memory_chunks_embedding ON memory_chunks USING hnsw ((embedding::halfvec(768)) halfvec_cosine_ops);
		DROP INDEX memory_chunks_owner, memory_chunks_source, memory_chunks_text; ALTER TABLE memory_chunks DROP CONSTRAINT memory_chunks_pkey;
		ANALYZE memory_chunks`); err != nil {
		t.Fatal(err)
	}

	search := func(iterative bool) (int, string) {
		var n int
		var plan strings.Builder
		q := randomUnit(rng)
		err := s.WithOwner(ctx, small.ID, func(tx *Tx) error {
			if err := tx.RawExec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			if !iterative {
				if err := tx.RawExec(ctx, `SET LOCAL hnsw.iterative_scan = off`); err != nil {
					return err
				}
			}
			var line string
			if err := tx.RawRow(ctx, `EXPLAIN (FORMAT JSON) SELECT id FROM memory_chunks WHERE owner_id = $1 AND superseded_at IS NULL
				ORDER BY embedding::halfvec(768) <=> $2::vector::halfvec(768) LIMIT 10`, small.ID, pgvector.NewVector(q)).Scan(&line); err != nil {
				return err
			}
			plan.WriteString(line)
			chunks, err := tx.Memory.NearestChunks(ctx, q, 10)
			n = len(chunks)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, plan.String()
	}
	for range 5 {
		n, plan := search(true)
		// memory_chunks is partitioned (migration 00024): the scan is of the owner's
		// partition's HNSW index, memory_chunks_pN_embedding_idx.
		if !regexp.MustCompile(`"Index Name": "memory_chunks_p\d+_embedding_idx"`).MatchString(plan) {
			t.Fatalf("plan does not use the HNSW index: %s", plan)
		}
		if n != 10 {
			t.Fatalf("filtered search with iterative scan returned %d rows, want 10", n)
		}
	}
	short := 0
	for range 5 {
		if n, _ := search(false); n < 10 {
			short++
		}
	}
	if short == 0 {
		t.Error("control: without iterative scan every search still returned 10 rows, so the test does not exercise the filter")
	}
}

func randomUnit(rng *rand.Rand) []float32 {
	v := make([]float32, 768)
	var sum float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		sum += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(sum))
	}
	return v
}

func TestEmbeddingDimension(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testdb.New(t)
	s, err := Open(ctx, d.AppURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.EmbeddingDimension(ctx); err != nil || got != 768 {
		t.Fatalf("EmbeddingDimension = %d, %v; want 768", got, err)
	}
	if got, err := EmbeddingDimensionOf(ctx, testdb.Connect(t, d.OwnerURL)); err != nil || got != 768 {
		t.Errorf("EmbeddingDimensionOf = %d, %v; want 768", got, err)
	}
}
