package benchscale

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stewardhq/steward/internal/benchcycle"
)

// GeneratorVersion names the generator's output: change it whenever fillSQL changes what it
// writes, so a database filled by an older generator is not reused (Sizes.Database).
const GeneratorVersion = 1

// Sizes are what the generator writes. Full is the year of many households; Scaled
// shrinks it for quicker runs. Owners' sizes are skewed (Zipf, s = 1): owner i has
// Turns/(i·H) turns, so there are owners of every size, from a handful of turns to a busy
// household's year; everything else an owner has follows its turns.
type Sizes struct {
	Owners int
	Turns  int
	// Per turn: audit events are the ten a real approval cycle writes; messages the four.
	// MemoryPerTurn conversation chunks (with their outbox row), PostingsPerTurn ledger
	// postings (two per transaction), DocChunksPerTurn document chunks (ten per document).
	MemoryPerTurn, PostingsPerTurn, DocChunksPerTurn float64
	Seed                                             int64
	Scale                                            float64
}

// Full is the database: 10,000 owners; 1,000,000 turns with their tool calls, audit
// events and messages; 1,000,000 conversation memory chunks; 5,000,000 ledger postings;
// 100,000 document chunks.
func Full(seed int64) Sizes {
	return Sizes{Owners: 10_000, Turns: 1_000_000, MemoryPerTurn: 1, PostingsPerTurn: 5, DocChunksPerTurn: 0.1, Seed: seed, Scale: 1}
}

// Scaled is s with its owners and turns (and so everything) multiplied by f.
func (s Sizes) Scaled(f float64) Sizes {
	s.Owners = max(3, int(math.Round(float64(s.Owners)*f)))
	s.Turns = max(30, int(math.Round(float64(s.Turns)*f)))
	s.Scale *= f
	return s
}

// Database is the filled database's name: the generator's version, seed and scale, so a
// re-run with the same ones reuses it.
func (s Sizes) Database() string {
	return fmt.Sprintf("steward_scale_v%d_s%d_x%s", GeneratorVersion, s.Seed,
		strings.ReplaceAll(strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", s.Scale), "0"), "."), ".", "_"))
}

// harmonic is H(n) = 1 + 1/2 + … + 1/n.
func harmonic(n int) float64 {
	h := 0.0
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	return h
}

// fillTables are the tables the generator writes; their non-constraint indexes are dropped
// before the fill and built again after it (a bulk load is faster without them).
var fillTables = []string{"conversations", "turns", "tool_calls", "messages", "audit_log", "memory_outbox",
	"memory_chunks", "documents", "ledger_accounts", "ledger_transactions", "ledger_postings", "job_runs", "webhooks", "webhook_deliveries"}

// fillSQL writes the database, as the superuser with triggers and foreign-key checks off
// (session_replication_role = replica): the data is consistent by construction. Every id is
// an md5 of the seed and the row's place, and random() is seeded, so the same Sizes write the
// same rows. :anchor is the fill's now: every owner's history ends an hour before it.
func fillSQL(s Sizes) []string {
	seed := fmt.Sprintf("'%d'", s.Seed)
	r := strings.NewReplacer(":seed", seed, ":owners", fmt.Sprint(s.Owners), ":turns", fmt.Sprint(s.Turns),
		":h", fmt.Sprintf("%.10f", harmonic(s.Owners)), ":mem", fmt.Sprintf("%.4f", s.MemoryPerTurn),
		":postings", fmt.Sprintf("%.4f", s.PostingsPerTurn), ":docchunks", fmt.Sprintf("%.4f", s.DocChunksPerTurn),
		":setseed", fmt.Sprintf("%.6f", math.Mod(float64(s.Seed)/1000, 1)))
	out := make([]string, len(fillStatements))
	for i, st := range fillStatements {
		out[i] = r.Replace(st)
	}
	return out
}

var fillStatements = []string{
	`SELECT setseed(:setseed)`,
	// Owners: rank i has turns/(i·H) turns (at least one); t0 is its first turn's global number.
	`CREATE UNLOGGED TABLE bench.owner AS
	SELECT i, md5(:seed || '/owner/' || i)::uuid AS id, n AS turns, sum(n) OVER (ORDER BY i) - n AS t0
	FROM (SELECT i, greatest(1, round(:turns / (i * :h)))::int AS n FROM generate_series(1, :owners) i) x`,
	`INSERT INTO owners (id, name, created_at, daily_messages, daily_cost_micros)
	SELECT id, 'scale owner ' || i, bench.anchor() - interval '400 days', 100000000, 1000000000000 FROM bench.owner`,
	// Turns: j = 1…turns over the last year, ten to a conversation; the newest turn of every
	// third owner waits for approval (the inbox), every 50th failed.
	`CREATE UNLOGGED TABLE bench.turn AS
	SELECT o.id AS owner_id, o.i, j, o.t0 + j AS n, md5(:seed || '/turn/' || (o.t0 + j))::uuid AS id,
		md5(:seed || '/conversation/' || o.i || '/' || ((j - 1) / 10))::uuid AS conversation_id,
		(j - 1) % 10 AS pos,
		bench.anchor() - interval '1 hour' - interval '365 days' * (o.turns - j)::float8 / o.turns AS at,
		CASE WHEN j = o.turns AND o.i % 3 = 0 THEN 'suspended' WHEN j % 50 = 0 THEN 'failed' ELSE 'completed' END AS status,
		'call_' || left(md5(:seed || '/call/' || (o.t0 + j)), 24) AS call_id
	FROM bench.owner o, generate_series(1, o.turns) j`,
	`INSERT INTO conversations (id, owner_id, title, created_at, updated_at)
	SELECT conversation_id, min(owner_id::text)::uuid, 'remind me to buy milk', min(at), max(at) FROM bench.turn GROUP BY conversation_id`,
	`INSERT INTO turns (id, owner_id, conversation_id, trigger, status, version, iterations, input_tokens, output_tokens,
		cost_micros, model, answer, error, created_at, updated_at, expires_at, finished_at, state)
	SELECT id, owner_id, conversation_id, 'chat', status, CASE status WHEN 'suspended' THEN 2 ELSE 4 END,
		CASE status WHEN 'suspended' THEN 1 ELSE 2 END, 250, 18, 256, 'gemini-3.8-flash',
		CASE status WHEN 'completed' THEN 'Added "buy milk" to your tasks.' END,
		CASE status WHEN 'failed' THEN 'the model failed' END,
		at, at + interval '2 seconds',
		CASE status WHEN 'suspended' THEN bench.anchor() + interval '7 days' END,
		CASE WHEN status <> 'suspended' THEN at + interval '2 seconds' END,
		CASE status WHEN 'suspended' THEN jsonb_build_object('schema_version', 1, 'iterations', 1, 'cost_micros', 113, 'trace_seq', 5,
			'history_seq', pos * 4, 'results', NULL, 'usage', '{"input_tokens": 100, "cached_tokens": 0, "output_tokens": 10}'::jsonb,
			'calls', jsonb_build_array(jsonb_build_object('id', call_id, 'args', '{"title": "buy milk"}'::jsonb, 'name', 'create_task', 'minted_id', true)),
			'pending', jsonb_build_array(jsonb_build_object('args', '{"title": "buy milk"}'::jsonb, 'tool', 'create_task', 'call_id', call_id,
				'args_hash', '00816bf15afed930c38cb6b6c12ddafb5ac505cc6df7d1412aa2fce4bd2a905a', 'reversible', true, 'always_offered', true)),
			'messages', jsonb_build_array('{"role": "user", "parts": [{"text": "remind me to buy milk"}]}'::jsonb,
				jsonb_build_object('role', 'model', 'parts', jsonb_build_array(jsonb_build_object('tool_call',
					jsonb_build_object('id', call_id, 'args', '{"title": "buy milk"}'::jsonb, 'name', 'create_task', 'minted_id', true)))))) END
	FROM bench.turn`,
	`INSERT INTO tool_calls (owner_id, turn_id, call_id, tool, kind, args, args_hash, status, decided_by, result, created_at, updated_at, executed_at)
	SELECT owner_id, id, call_id, 'create_task', 'write', '{"title": "buy milk"}',
		'00816bf15afed930c38cb6b6c12ddafb5ac505cc6df7d1412aa2fce4bd2a905a',
		CASE status WHEN 'suspended' THEN 'pending' WHEN 'failed' THEN 'denied' ELSE 'succeeded' END,
		CASE WHEN status <> 'suspended' THEN 'human' END,
		CASE status WHEN 'completed' THEN jsonb_build_object('task', jsonb_build_object('id', md5(:seed || '/task/' || id)::uuid, 'title', 'buy milk', 'status', 'open')) END,
		at, at + interval '1 second', CASE status WHEN 'completed' THEN at + interval '1 second' END
	FROM bench.turn`,
	// Messages: the four of a cycle (two while it waits), four sequence numbers per turn of the conversation.
	`INSERT INTO messages (owner_id, conversation_id, turn_id, seq, role, content, created_at)
	SELECT t.owner_id, t.conversation_id, t.id, t.pos * 4 + m.k, m.role,
		CASE m.k
		WHEN 1 THEN '{"role": "user", "parts": [{"text": "remind me to buy milk"}]}'::jsonb
		WHEN 2 THEN jsonb_build_object('role', 'model', 'parts', jsonb_build_array(jsonb_build_object('tool_call',
			jsonb_build_object('id', t.call_id, 'args', '{"title": "buy milk"}'::jsonb, 'name', 'create_task'))))
		WHEN 3 THEN jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('tool_result',
			jsonb_build_object('name', 'create_task', 'call_id', t.call_id, 'output', '<data source="tool:create_task">{"task":{"status":"open","title":"buy milk"}}</data>'))))
		ELSE '{"role": "model", "parts": [{"text": "Added \"buy milk\" to your tasks."}]}'::jsonb END,
		t.at + m.k * interval '100 ms'
	FROM bench.turn t, (VALUES (1, 'user'), (2, 'model'), (3, 'user'), (4, 'model')) m (k, role)
	WHERE m.k <= 2 OR t.status <> 'suspended'`,
	// Audit: the ten events of a cycle (five while it waits).
	`INSERT INTO audit_log (owner_id, turn_id, seq, kind, data, created_at)
	SELECT t.owner_id, t.id, e.seq, e.kind,
		CASE WHEN e.data ? 'call_id' THEN e.data || jsonb_build_object('call_id', t.call_id)
			WHEN e.seq = 1 THEN e.data || jsonb_build_object('conversation_id', t.conversation_id) ELSE e.data END,
		t.at + e.seq * interval '50 ms'
	FROM bench.turn t, (VALUES
		(1, 'turn_started', '{"model": "gemini-3.8-flash", "trigger": "chat", "prompt_version": "steward-2026-11-30.1"}'::jsonb),
		(2, 'model_call', '{"model": "gemini-3.8-flash", "tools": true, "usage": {"input_tokens": 100, "cached_tokens": 0, "output_tokens": 10}, "finish": "tool_calls", "latency_ms": 2, "cost_micros": 113, "finish_detail": "STOP"}'),
		(3, 'tool_requested', '{"kind": "write", "tool": "create_task", "call_id": "", "args_hash": "00816bf15afed930c38cb6b6c12ddafb5ac505cc6df7d1412aa2fce4bd2a905a"}'),
		(4, 'gate_decision', '{"by": "", "tool": "create_task", "reason": "", "call_id": "", "verdict": "ask"}'),
		(5, 'turn_suspended', '{"pending": 1}'),
		(6, 'turn_resumed', '{"decisions": 1}'),
		(7, 'gate_decision', '{"by": "human", "tool": "create_task", "call_id": "", "verdict": "allow"}'),
		(8, 'tool_result', '{"ok": true, "tool": "create_task", "bytes": 132, "call_id": "", "duration_ms": 0}'),
		(9, 'model_call', '{"model": "gemini-3.8-flash", "tools": true, "usage": {"input_tokens": 150, "cached_tokens": 0, "output_tokens": 8}, "finish": "stop", "latency_ms": 3, "cost_micros": 143, "finish_detail": "STOP"}'),
		(10, 'turn_completed', '{"error": "", "usage": {"input_tokens": 250, "cached_tokens": 0, "output_tokens": 18}, "iterations": 2}')
	) e (seq, kind, data)
	WHERE e.seq <= 5 OR t.status <> 'suspended'`,
	// Memory: the outbox row of every ended turn, done; :mem conversation chunks per turn.
	`INSERT INTO memory_outbox (owner_id, turn_id, conversation_id, attempts, next_attempt_at, done_at, created_at)
	SELECT owner_id, id, conversation_id, 1, at, at + interval '3 seconds', at FROM bench.turn WHERE status <> 'suspended'`,
	`INSERT INTO memory_chunks (id, owner_id, source_kind, source_id, text, embedding, created_at, origin)
	SELECT md5(:seed || '/chunk/' || t.id)::uuid, t.owner_id, 'conversation', t.id::text,
		'Owner: remind me to buy milk ' || t.j || E'\nSteward: Added "buy milk" to your tasks.',
		l2_normalize(a.v + b.v), t.at + interval '3 seconds', 'owner'
	FROM bench.turn t JOIN bench.pool a ON a.k = t.n % 1024 JOIN bench.pool b ON b.k = 1024 + (t.n / 1024) % 1024
	WHERE t.status = 'completed' AND random() < :mem`,
	// Documents: one per hundred turns of an owner (:docchunks·10 per turn), ten chunks each.
	`CREATE UNLOGGED TABLE bench.document AS
	SELECT owner_id, md5(:seed || '/document/' || id)::uuid AS id, n, at FROM bench.turn WHERE random() < :docchunks / 10`,
	`INSERT INTO documents (id, owner_id, name, content_type, size_bytes, sha256, content, text, source, created_at)
	SELECT id, owner_id, 'statement.txt', 'text/plain', 42, md5(id::text) || md5(id::text), '\x00', 'a statement of the month', 'upload', at
	FROM bench.document`,
	`INSERT INTO memory_chunks (owner_id, source_kind, source_id, text, embedding, created_at, origin)
	SELECT d.owner_id, 'document', d.id::text, 'page ' || c || ' of a statement', l2_normalize(a.v - b.v), d.at, 'document'
	FROM bench.document d CROSS JOIN generate_series(1, 10) c
		JOIN bench.pool a ON a.k = (d.n * 10 + c) % 1024 JOIN bench.pool b ON b.k = 1024 + ((d.n * 10 + c) / 1024) % 1024`,
	// Ledger: a checking account, a salary and five spending categories per owner with
	// turns enough; :postings/2 transactions per turn over the year, two postings each.
	`INSERT INTO ledger_accounts (id, owner_id, name, kind, currency, created_at)
	SELECT md5(:seed || '/account/' || o.i || '/' || a.name)::uuid, o.id, a.name, a.kind, 'EUR', bench.anchor() - interval '400 days'
	FROM bench.owner o, (VALUES ('Checking', 'asset'), ('Salary', 'income'), ('Groceries', 'expense'), ('Rent', 'expense'),
		('Transport', 'expense'), ('Eating out', 'expense'), ('Utilities', 'expense')) a (name, kind)`,
	`CREATE UNLOGGED TABLE bench.txn AS
	SELECT o.id AS owner_id, o.i, md5(:seed || '/txn/' || o.i || '/' || n)::uuid AS id, n,
		(bench.anchor() - interval '365 days' * random())::date AS date,
		(ARRAY['Salary', 'Groceries', 'Rent', 'Transport', 'Eating out', 'Utilities'])[1 + n % 6] AS category,
		(100 + (random() * 9000)::int) * CASE WHEN n % 6 = 0 THEN 1 ELSE -1 END AS amount
	FROM bench.owner o, generate_series(1, greatest(1, round(o.turns * :postings / 2))::int) n`,
	`INSERT INTO ledger_transactions (id, owner_id, date, description, merchant, source, created_at)
	SELECT id, owner_id, date, category || ' ' || n, category, 'import', date::timestamptz FROM bench.txn`,
	`INSERT INTO ledger_postings (owner_id, transaction_id, account_id, amount_minor, currency)
	SELECT t.owner_id, t.id, md5(:seed || '/account/' || t.i || '/' || p.name)::uuid, t.amount * p.sign, 'EUR'
	FROM bench.txn t, LATERAL (VALUES ('Checking', 1), (t.category, -1)) p (name, sign)`,
	// Job runs: one webhook per owner, a finished run per twenty turns, with its delivery.
	`INSERT INTO webhooks (id, owner_id, hook_id, source, secret, created_at)
	SELECT md5(:seed || '/webhook/' || i)::uuid, id, 'wh_' || md5(:seed || '/hook/' || i), 'bank',
		'whsec_' || md5(:seed || '/secret/' || i), bench.anchor() - interval '400 days' FROM bench.owner`,
	`INSERT INTO job_runs (id, owner_id, job, trigger, scheduled_for, status, created_at, started_at, finished_at)
	SELECT md5(:seed || '/run/' || t.id)::uuid, t.owner_id, 'webhook:bank', 'webhook', t.at, 'completed', t.at, t.at, t.at + interval '5 seconds'
	FROM bench.turn t WHERE t.j % 20 = 0`,
	`INSERT INTO webhook_deliveries (owner_id, webhook_id, message_id, run_id, body, received_at)
	SELECT t.owner_id, md5(:seed || '/webhook/' || t.i)::uuid, 'msg-' || t.j, md5(:seed || '/run/' || t.id)::uuid,
		convert_to('{"event": "payment", "amount": 1234}', 'UTF8'), t.at
	FROM bench.turn t WHERE t.j % 20 = 0`,
}

// fillFunctions are the generator's helpers, in schema bench (the superuser's; the app never
// sees it): the fill's anchor (its now, kept in bench.meta) and a pool of 2,048 reproducible
// vectors; an embedding is the normalised sum (or difference) of two of them, a million
// distinct ones at the cost of an addition each.
const fillFunctions = `
CREATE SCHEMA bench;
CREATE TABLE bench.meta (generator int NOT NULL, seed bigint NOT NULL, scale float8 NOT NULL,
	anchor timestamptz NOT NULL, filled_at timestamptz, fill_seconds float8);
CREATE FUNCTION bench.anchor() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT anchor FROM bench.meta';
CREATE UNLOGGED TABLE bench.pool AS SELECT k,
	(SELECT array_agg(sin(k * 12.9898 + d * 78.233) ORDER BY d) FROM generate_series(1, 768) d)::vector AS v
	FROM generate_series(0, 2047) k;
`

// ensureFilled makes database db (steward migrate bootstrap and up) and fills it, unless a
// finished fill is already there; either way it runs steward migrate up (a new migration
// builds its indexes over the filled data) and returns the environment the steward commands
// run with.
func ensureFilled(ctx context.Context, o Options, db string) ([]string, error) {
	bo := o.cycleOptions(db)
	env, err := benchcycle.BenchEnv(bo)
	if err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"migrate", "bootstrap"}, {"migrate", "up"}} {
		if _, err := benchcycle.Command(ctx, o.Steward, env, args...); err != nil {
			return nil, err
		}
	}
	conn, err := benchcycle.Connect(ctx, o.SuperuserDatabaseURL, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var filled bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM bench.meta WHERE filled_at IS NOT NULL)`).Scan(&filled)
	if err == nil && filled {
		o.logf("%s is filled already (generator %d, seed %d, scale %g): no fill", db, GeneratorVersion, o.Sizes.Seed, o.Sizes.Scale)
		return env, nil
	}
	if err != nil && !strings.Contains(err.Error(), "does not exist") {
		return nil, err
	}
	return env, Fill(ctx, conn, o.Sizes, o.logf)
}

// Fill writes the generated data of s into the migrated, empty database conn is connected to
// as the superuser (dropping what an unfinished fill left), then VACUUM ANALYZEs it.
func Fill(ctx context.Context, conn *pgx.Conn, s Sizes, logf func(string, ...any)) error {
	start := time.Now()
	logf("filling: %d owners, %d turns (scale %g, seed %d)", s.Owners, s.Turns, s.Scale, s.Seed)
	truncate := `TRUNCATE owners CASCADE`
	for _, st := range []string{
		`DROP SCHEMA IF EXISTS bench CASCADE`,
		`SET session_replication_role = replica`, // no triggers (audit_log's append-only guard), no FK checks
		truncate,
		`SET synchronous_commit = off`,
		`SET maintenance_work_mem = '1GB'`,
		`SET work_mem = '256MB'`,
		fillFunctions,
		`INSERT INTO bench.meta (generator, seed, scale, anchor) VALUES (` + fmt.Sprintf("%d, %d, %g", GeneratorVersion, s.Seed, s.Scale) + `, date_trunc('second', now()))`,
	} {
		if _, err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%.40s: %w", st, err)
		}
	}
	indexes, err := dropIndexes(ctx, conn)
	if err != nil {
		return err
	}
	for _, st := range fillSQL(s) {
		t0 := time.Now()
		tag, err := conn.Exec(ctx, st)
		if err != nil {
			return fmt.Errorf("%s: %w", firstLine(st), err)
		}
		logf("  %s: %d rows, %.1f s", firstLine(st), tag.RowsAffected(), time.Since(t0).Seconds())
	}
	for _, ix := range indexes {
		t0 := time.Now()
		if _, err := conn.Exec(ctx, ix); err != nil {
			return fmt.Errorf("%s: %w", ix, err)
		}
		logf("  %s: %.1f s", firstLine(ix), time.Since(t0).Seconds())
	}
	for _, st := range []string{`DROP TABLE bench.turn, bench.txn, bench.document, bench.pool`, `VACUUM ANALYZE`} {
		t0 := time.Now()
		if _, err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
		logf("  %s: %.1f s", st, time.Since(t0).Seconds())
	}
	if _, err := conn.Exec(ctx, `UPDATE bench.meta SET filled_at = now(), fill_seconds = $1`, time.Since(start).Seconds()); err != nil {
		return err
	}
	logf("filled in %.0f s", time.Since(start).Seconds())
	return nil
}

// dropIndexes drops the indexes of fillTables that no constraint owns and returns the
// statements that build them again.
func dropIndexes(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
		WHERE c.relname = ANY($1) AND c.relnamespace = 'public'::regnamespace
			AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
		ORDER BY 1`, fillTables)
	if err != nil {
		return nil, err
	}
	type index struct{ name, def string }
	ixs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var ix index
		return ix, r.Scan(&ix.name, &ix.def)
	})
	if err != nil {
		return nil, err
	}
	defs := make([]string, 0, len(ixs))
	for _, ix := range ixs {
		if _, err := conn.Exec(ctx, "DROP INDEX "+ix.name); err != nil {
			return nil, fmt.Errorf("drop index %s: %w", ix.name, err)
		}
		// A partitioned index's definition says ON ONLY: built so, it would cover no partition.
		defs = append(defs, strings.Replace(ix.def, " ON ONLY ", " ON ", 1))
	}
	return defs, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// pickOwners chooses the small, medium and large owners of db (the generator's ranks: the
// last, the one with about a hundredth of the largest's turns, the first), gives each an API
// key (steward keys add) and returns them.
func pickOwners(ctx context.Context, o Options, db string, env []string) ([]target, error) {
	conn, err := benchcycle.Connect(ctx, o.SuperuserDatabaseURL, db)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	medium := max(1, min(o.Sizes.Owners, 100))
	var out []target
	for _, p := range []struct {
		size string
		rank int
	}{{"small", o.Sizes.Owners}, {"medium", medium}, {"large", 1}} {
		id := md5UUID(fmt.Sprintf("%d/owner/%d", o.Sizes.Seed, p.rank))
		var turns int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM turns WHERE owner_id = $1`, id).Scan(&turns); err != nil {
			return nil, err
		}
		if turns == 0 {
			return nil, errors.New("owner " + id + " has no turns: is the fill complete?")
		}
		out = append(out, target{size: p.size, turns: turns, ownerID: id})
	}
	for i := range out {
		key, err := benchcycle.Command(ctx, o.Steward, env, "keys", "add", "--owner", out[i].ownerID, "--name", "bench-scale", "--json")
		if err != nil {
			return nil, err
		}
		if out[i].apiKey, err = jsonField(key, "api_key"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// md5UUID is PostgreSQL's md5(s)::uuid: the generator's ids.
func md5UUID(s string) string {
	h := fmt.Sprintf("%x", md5.Sum([]byte(s)))
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// jsonField is the string field name of the JSON object raw.
func jsonField(raw []byte, name string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("%w: %s", err, raw)
	}
	v, ok := m[name].(string)
	if !ok || v == "" {
		return "", fmt.Errorf("no %s in %s", name, raw)
	}
	return v, nil
}
