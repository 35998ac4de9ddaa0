package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/stewardhq/steward/internal/memory"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
)

// BenchmarkRecall100k is the recall target of issue 14: one owner with 100,000 chunks of
// Dimension (768) floats, plus 50,000 chunks of nine other owners in the same table, searched
// as steward serve runs it (store.Store.WithOwner as steward_app under row-level security, on a
// pool with store.WithGenericPlans, then Memory.NearestChunks) for the 10 nearest, over 100 fixed queries. It reports the p50 and
// p99 latency of one owner transaction (BEGIN with the settings, the search, COMMIT) and
// recall@10 against an exact ground truth (a sequential scan, computed once).
//
//	make bench-recall
//
// The vectors are deterministic: unit vectors around 1,000 random centroids (text embeddings
// cluster by topic). Loading and indexing 150,000 rows takes minutes, so the data lives in a
// database of its own (testdb.Cached: steward_cache_recall100k_<migrations hash>) that later
// runs reuse, and a change to the migrations rebuilds.
func BenchmarkRecall100k(b *testing.B) {
	const k = 10
	d := testdb.Cached(b, "recall100k", fillRecall100k)
	ctx := context.Background()
	super, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		b.Fatal(err)
	}
	defer super.Close(ctx)
	if err := pgxvec.RegisterTypes(ctx, super); err != nil {
		b.Fatal(err)
	}
	type query struct {
		owner uuid.UUID
		vec   []float32
		truth []uuid.UUID
	}
	rows, err := super.Query(ctx, `SELECT owner_id, embedding, truth FROM bench_recall_queries ORDER BY i`)
	if err != nil {
		b.Fatal(err)
	}
	queries, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (query, error) {
		var q query
		var v pgvector.Vector
		err := r.Scan(&q.owner, &v, &q.truth)
		q.vec = v.Slice()
		return q, err
	})
	if err != nil {
		b.Fatal(err)
	}
	var indexDef string
	var chunks, indexMB int64
	if err := super.QueryRow(ctx, `SELECT pg_get_indexdef('memory_chunks_embedding'::regclass),
		(SELECT count(*) FROM memory_chunks),
		(SELECT sum(pg_relation_size(inhrelid)) FROM pg_inherits WHERE inhparent = 'memory_chunks_embedding'::regclass)::bigint >> 20`).Scan(&indexDef, &chunks, &indexMB); err != nil {
		b.Fatal(err)
	}
	appURL, err := store.WithGenericPlans(d.AppURL)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(ctx, appURL, 2)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	search := func(q query) ([]store.MemoryChunk, error) {
		var got []store.MemoryChunk
		err := s.WithOwner(ctx, q.owner, func(tx *store.Tx) error {
			var err error
			got, err = tx.Memory.NearestChunks(ctx, q.vec, k)
			return err
		})
		return got, err
	}
	for _, q := range queries { // warm the cache, as a running server's is
		if _, err := search(q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d chunks (%s), index %d MB (all partitions); %d queries; %s", chunks, d.Name, indexMB, len(queries), indexDef)
	var lat []time.Duration
	hits, total, i := 0, 0, 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		start := time.Now()
		got, err := search(q)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range got {
			if slices.Contains(q.truth, c.ID) {
				hits++
			}
		}
		total += k
	}
	slices.Sort(lat)
	ms := func(p int) float64 { return float64(lat[(len(lat)-1)*p/100].Microseconds()) / 1000 }
	b.ReportMetric(ms(50), "p50-ms")
	b.ReportMetric(ms(99), "p99-ms")
	b.ReportMetric(float64(hits)/float64(total), "recall@10")
}

// fillRecall100k loads BenchmarkRecall100k's data into d as the superuser: the owners, the
// chunks (COPY, without the HNSW index, which is then built as the migrations define it), and
// the table bench_recall_queries of the 100 queries with their exact 10 nearest.
func fillRecall100k(ctx context.Context, d testdb.DB) error {
	const target, others, perOther, centroids, nq, k = 100_000, 9, 5_556, 1000, 100, 10
	conn, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(14, 100_000))
	cs := make([][]float32, centroids)
	for i := range cs {
		cs[i] = noisy(rng, nil, 1)
	}
	owners := make([]uuid.UUID, 1+others)
	for i := range owners {
		owners[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "steward-bench-recall-owner-%d", i))
		if _, err := conn.Exec(ctx, `INSERT INTO owners (id, name) VALUES ($1, $2)`, owners[i], fmt.Sprintf("bench%d", i)); err != nil {
			return err
		}
	}
	var def string
	if err := conn.QueryRow(ctx, `SELECT pg_get_indexdef('memory_chunks_embedding'::regclass)`).Scan(&def); err != nil {
		return err
	}
	// memory_chunks is partitioned (migration 00024): the definition of its index names ON ONLY
	// the parent, and the index is rebuilt on every partition.
	def = strings.Replace(def, " ON ONLY ", " ON ", 1)
	if _, err := conn.Exec(ctx, `DROP INDEX memory_chunks_embedding`); err != nil {
		return err
	}
	// The target owner's rows interleaved with the others', as rows arrive over time.
	n, total := 0, target+others*perOther
	left := make([]int, len(owners))
	left[0] = target
	for i := 1; i < len(owners); i++ {
		left[i] = perOther
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"memory_chunks"},
		[]string{"id", "owner_id", "source_kind", "source_id", "text", "embedding", "origin", "created_at"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if n == total {
				return nil, nil
			}
			o := rng.IntN(len(owners))
			for left[o] == 0 {
				o = (o + 1) % len(owners)
			}
			left[o]--
			n++
			v := noisy(rng, cs[rng.IntN(centroids)], 0.6)
			return []any{uuid.New(), owners[o], memory.KindConversation, uuid.NewString(), sentence(rng),
				pgvector.NewVector(v), store.OriginOwner, created.Add(time.Duration(n) * time.Minute)}, nil
		}))
	if err != nil {
		return err
	}
	for _, s := range []string{`SET maintenance_work_mem = '2GB'`, `SET max_parallel_maintenance_workers = 2`, def, `VACUUM ANALYZE memory_chunks`,
		`CREATE TABLE bench_recall_queries (i int PRIMARY KEY, owner_id uuid NOT NULL, embedding vector(768) NOT NULL, truth uuid[])`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	for i := range nq {
		q := noisy(rng, cs[rng.IntN(centroids)], 0.6)
		if _, err := conn.Exec(ctx, `INSERT INTO bench_recall_queries (i, owner_id, embedding) VALUES ($1, $2, $3)`, i, owners[0], pgvector.NewVector(q)); err != nil {
			return err
		}
	}
	// The exact answer: no index scan, so every row of the owner is compared.
	_, err = conn.Exec(ctx, `SET enable_indexscan = off; SET enable_bitmapscan = off;
		UPDATE bench_recall_queries q SET truth = ARRAY(SELECT c.id FROM memory_chunks c
			WHERE c.owner_id = q.owner_id AND c.superseded_at IS NULL ORDER BY c.embedding <=> q.embedding LIMIT `+fmt.Sprint(k)+`);
		RESET enable_indexscan; RESET enable_bitmapscan`)
	return err
}
