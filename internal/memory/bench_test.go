package memory_test

import (
	"context"
	"fmt"
	"math"
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

// Benchmarks against real Postgres:
//
//	go test -run '^$' -bench . -benchtime 200x ./internal/memory/
//
// BenchmarkRecall: Service.Recall (offline embedder, one owner transaction) with N chunks per
// owner. BenchmarkIngest: the worker draining the outbox. BenchmarkHNSW: the target,
// 100,000 768-d chunks across 10 owners, recall@10 against exact search and latency at
// ef_search 40 and 100 through the app role with RLS on (skipped with -short).

// bulkLoad copies rows of cols into memory_chunks as the superuser, without the HNSW index,
// then builds the index (faster than one index insert per row) and returns the build time.
func bulkLoad(tb testing.TB, d testdb.DB, cols []string, rows [][]any) time.Duration {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		tb.Fatal(err)
	}
	var def string // the index as the migrations define it
	if err := conn.QueryRow(ctx, `SELECT pg_get_indexdef('memory_chunks_embedding'::regclass)`).Scan(&def); err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `DROP INDEX memory_chunks_embedding`); err != nil {
		tb.Fatal(err)
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"memory_chunks"}, cols, pgx.CopyFromRows(rows))
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if _, err := conn.Exec(ctx, `SET maintenance_work_mem = '1GB'`); err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Exec(ctx, def); err != nil {
		tb.Fatal(err)
	}
	build := time.Since(start)
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE memory_chunks`); err != nil {
		tb.Fatal(err)
	}
	return build
}

// sentence makes a synthetic note from a small vocabulary, so offline embeddings overlap.
func sentence(rng *rand.Rand) string {
	words := strings.Fields(`boat garden invoice meeting sister tulips Lisbon budget project
		deadline coffee recipe flight hotel dentist school report review contract Anna Tom
		birthday gift train ticket quarterly plan sailing paint kitchen doctor insurance tax`)
	n := 8 + rng.IntN(12)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[rng.IntN(len(words))]
	}
	return "Owner: " + strings.Join(parts[:n/2], " ") + "\nSteward: " + strings.Join(parts[n/2:], " ")
}

func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			e := newEnv(b)
			owner, other := e.owner("alice"), e.owner("bob")
			rng := rand.New(rand.NewPCG(7, uint64(n)))
			var rows [][]any
			for _, o := range []uuid.UUID{owner, other} {
				texts := make([]string, n)
				for i := range texts {
					texts[i] = sentence(rng)
				}
				vecs, err := memory.Offline{}.Embed(e.ctx, texts)
				if err != nil {
					b.Fatal(err)
				}
				for i := range texts {
					rows = append(rows, []any{o, memory.KindConversation, uuid.NewString(), texts[i], pgvector.NewVector(vecs[i])})
				}
			}
			bulkLoad(b, e.db, []string{"owner_id", "source_kind", "source_id", "text", "embedding"}, rows)
			for i := range 50 {
				if _, _, err := e.svc.AddFact(e.ctx, owner, memory.NewFact{Content: fmt.Sprintf("fact %d: %s", i, sentence(rng))}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				block, _, err := e.svc.Recall(e.ctx, owner, "What did we plan for Anna's birthday gift and the sailing trip?")
				if err != nil || block == "" {
					b.Fatalf("recall: %q, %v", block, err)
				}
			}
		})
	}
}

func BenchmarkIngest(b *testing.B) {
	e := newEnv(b)
	owner := e.owner("alice")
	rng := rand.New(rand.NewPCG(1, 1))
	b.StopTimer()
	for range b.N {
		e.turn(owner, nil, sentence(rng), sentence(rng))
	}
	b.StartTimer()
	d, err := e.worker.Drain(e.ctx, b.N)
	b.StopTimer()
	if err != nil || d.Done != b.N {
		b.Fatalf("drain = %+v, %v; want %d done", d, err, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// hnswData is the synthetic corpus of BenchmarkHNSW: unit vectors drawn around 1,000 random
// centroids (text embeddings cluster by topic; uniform random vectors would be the
// unrealistic worst case), 10 owners.
type hnswData struct {
	owners  []uuid.UUID
	vectors map[uuid.UUID][][]float32
	ids     map[uuid.UUID][]uuid.UUID
}

func BenchmarkHNSW(b *testing.B) {
	if testing.Short() {
		b.Skip("100,000 chunks: not in -short")
	}
	const owners, perOwner, centroids, k = 10, 10000, 1000, 10
	e := newEnv(b)
	rng := rand.New(rand.NewPCG(42, 42))
	cs := make([][]float32, centroids)
	for i := range cs {
		cs[i] = noisy(rng, nil, 1)
	}
	data := hnswData{vectors: map[uuid.UUID][][]float32{}, ids: map[uuid.UUID][]uuid.UUID{}}
	var rows [][]any
	for o := range owners {
		id := e.owner(fmt.Sprintf("owner%d", o))
		data.owners = append(data.owners, id)
		for range perOwner {
			v := noisy(rng, cs[rng.IntN(centroids)], 0.6)
			cid := uuid.New()
			data.vectors[id] = append(data.vectors[id], v)
			data.ids[id] = append(data.ids[id], cid)
			rows = append(rows, []any{cid, id, memory.KindConversation, "", "synthetic", pgvector.NewVector(v)})
		}
	}
	build := bulkLoad(b, e.db, []string{"id", "owner_id", "source_kind", "source_id", "text", "embedding"}, rows)
	var table, index int64
	conn, err := pgx.Connect(e.ctx, e.db.SuperURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(e.ctx)
	err = conn.QueryRow(e.ctx, `SELECT pg_total_relation_size('memory_chunks'), pg_relation_size('memory_chunks_embedding')`).Scan(&table, &index)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("100,000 chunks: HNSW build %s; table with indexes %d MB, HNSW index %d MB", build.Round(time.Millisecond), table>>20, index>>20)
	queries := make([]hnswQuery, 200)
	for i := range queries {
		o := data.owners[rng.IntN(owners)]
		q := noisy(rng, cs[rng.IntN(centroids)], 0.6)
		queries[i] = hnswQuery{owner: o, vec: q, exact: exactTopK(data, o, q, k)}
	}

	for _, ef := range []int{40, 100} {
		b.Run(fmt.Sprintf("ef_search=%d", ef), func(b *testing.B) {
			if _, err := conn.Exec(e.ctx, fmt.Sprintf(`ALTER ROLE steward_app IN DATABASE %s SET hnsw.ef_search = %d`, e.db.Name, ef)); err != nil {
				b.Fatal(err)
			}
			s, err := store.Open(e.ctx, e.db.AppURL, 2) // new connections take the setting
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.Logf("ef_search %s, plan uses %s", showSetting(b, e.db.AppURL, "hnsw.ef_search"), planIndex(b, e.db.AppURL, queries[0]))
			var lat []time.Duration
			hits, total := 0, 0
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				start := time.Now()
				var got []store.MemoryChunk
				err := s.WithOwner(e.ctx, q.owner, func(tx *store.Tx) error {
					var err error
					got, err = tx.Memory.NearestChunks(e.ctx, q.vec, k)
					return err
				})
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range got {
					if slices.Contains(q.exact, c.ID) {
						hits++
					}
				}
				total += k
			}
			slices.Sort(lat)
			b.ReportMetric(float64(hits)/float64(total), "recall@10")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
}

type hnswQuery struct {
	owner uuid.UUID
	vec   []float32
	exact []uuid.UUID
}

// noisy returns a unit vector: center plus Gaussian noise of the given scale (center nil:
// pure noise).
func noisy(rng *rand.Rand, center []float32, scale float64) []float32 {
	v := make([]float32, memory.Dimension)
	var sum float64
	for i := range v {
		x := rng.NormFloat64() * scale / math.Sqrt(memory.Dimension)
		if center != nil {
			x += float64(center[i])
		}
		v[i] = float32(x)
		sum += x * x
	}
	n := math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

// exactTopK is the exact k nearest of the owner's vectors by cosine distance.
func exactTopK(d hnswData, owner uuid.UUID, q []float32, k int) []uuid.UUID {
	type scored struct {
		id  uuid.UUID
		dot float64
	}
	all := make([]scored, len(d.vectors[owner]))
	for i, v := range d.vectors[owner] {
		var s float64
		for j := range v {
			s += float64(v[j]) * float64(q[j])
		}
		all[i] = scored{d.ids[owner][i], s}
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.dot > b.dot:
			return -1
		case a.dot < b.dot:
			return 1
		}
		return 0
	})
	out := make([]uuid.UUID, k)
	for i := range out {
		out[i] = all[i].id
	}
	return out
}

// showSetting reads a setting as a new app-role session sees it.
func showSetting(tb testing.TB, url, name string) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `SELECT current_setting($1, true)`, name).Scan(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// planIndex names the index (or scan) the planner picks for q's search, as the app role.
func planIndex(tb testing.TB, url string, q hnswQuery) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		tb.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var plan string
	_, err = tx.Exec(ctx, `SELECT set_config('app.owner_id', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`, q.owner.String())
	if err == nil {
		err = tx.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT id FROM memory_chunks WHERE owner_id = $1 AND superseded_at IS NULL
			ORDER BY embedding::halfvec(768) <=> $2::vector::halfvec(768) LIMIT 10`, q.owner, pgvector.NewVector(q.vec)).Scan(&plan)
	}
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range []string{"memory_chunks_embedding", "memory_chunks_owner", "memory_chunks_source", "Seq Scan"} {
		if strings.Contains(plan, name) {
			return name
		}
	}
	return "unknown"
}
