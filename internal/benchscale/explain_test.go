package benchscale

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// hotPath are the statements the approval cycle and the read routes run in an owner's
// transaction, by sqlc name: what the trace of steward serve (benchcycle -trace, or a proxy
// with SetTrace over bench-scale's operations) names for chat → suspended → confirm →
// completed, the memory worker's ingest of the turn, and GET /v1/conversations, /v1/approvals,
// /v1/activity, /v1/turns/{id}/events, /v1/ledger/report and /v1/memory/search.
var hotPath = []string{
	// the cycle
	"AdmitState", "LockOwner", "ControlState", "CreateConversation", "GetConversation", "CreateTurn", "GetTurn",
	"ClaimTurn", "TurnCancelRequested", "ListMessages", "InsertMessages", "TouchConversation",
	"InsertToolCall", "ListToolCalls", "UpdateToolCall", "MarkUnknownToolCalls", "RulesForTool", "AppendAuditBatch",
	"CreateTask", "EnqueueIngest", "ListMCPTools", "ListChannels", "GetChannel", "NearestChunks", "MatchFacts",
	// the memory worker's ingest of a turn
	"ClaimIngest", "CurrentChunkTexts", "CompleteIngest",
	// the read routes
	"ListConversations", "ListTurnsByStatus", "ListTurns", "ListTurnAudit", "LedgerEntries",
}

// doorPath are the cross-owner statements of the background drains, run as steward_door.
var doorPath = []string{"DueIngests", "ScanDueWork", "ScanSweepOwners"}

// TestHotPathIsIndexed: every hot-path statement can be served by an index on every table
// that holds owners' rows (docs/PERFORMANCE.md "At scale"). Over a generated database
// (fill.go, ANALYZEd), each statement's generic plan (EXPLAIN (GENERIC_PLAN), the plan a
// prepared statement settles on) is read as the app role under row-level security for the
// largest owner — or as the door for the cross-owner drains — with enable_seqscan off: the
// planner then takes a sequential scan only where no index can serve the access. At a test's
// sizes its choice between a small table's scan and an index says little; whether an index
// exists for every access is what stays true as the data grows. The same holds for its
// choice of join: each plan is read again with nested loops off, where a hash or merge join
// reads its inner side through its own conditions only.
func TestHotPathIsIndexed(t *testing.T) {
	d := filled(t, 0.01)
	ctx := context.Background()
	queries := sqlcQueries(t)
	su, err := pgx.Connect(ctx, d.SuperURL)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	rows, err := su.Query(ctx, `SELECT DISTINCT table_name::text FROM information_schema.columns
		WHERE table_schema = 'public' AND column_name IN ('owner_id', 'requester_id') UNION SELECT 'owners'`)
	if err != nil {
		t.Fatal(err)
	}
	ownerTables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	// tables with rows, and partial indexes: a walk of a whole index counts against a
	// statement only when it is not partial (a partial index holds one state's rows, such as
	// the due outbox items, not the history) and its table has rows (over an empty table the
	// planner's pick among indexes means nothing).
	names := func(sql string) []string {
		rows, err := su.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	w := walks{populated: names(`SELECT relname::text FROM pg_class WHERE relkind = 'r' AND reltuples > 0`),
		partial: names(`SELECT indexrelid::regclass::text FROM pg_index WHERE indpred IS NOT NULL`), leading: map[string]string{},
		table:       map[string]string{},
		settingKeys: map[string][]string{}}
	// A growing table's foreign keys to a table that does not grow (an account, a channel):
	// the key of one of the owner's few settings rows, as broad as the owner itself.
	for _, pair := range names(`SELECT DISTINCT c.conrelid::regclass::text || ' ' || a.attname || ' ' || c.confrelid::regclass::text
		FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
		WHERE c.contype = 'f'`) {
		f := strings.Fields(pair)
		if !slices.Contains(growing, f[2]) {
			w.settingKeys[f[0]] = append(w.settingKeys[f[0]], f[1])
		}
	}
	for _, row := range names(`SELECT i.indexrelid::regclass::text || ' ' || a.attname || ' ' || i.indrelid::regclass::text
		FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]`) {
		f := strings.Fields(row)
		w.leading[f[0]], w.table[f[0]] = f[1], f[2]
	}
	explain := func(t *testing.T, url, begin, name string) {
		sql, ok := queries[name]
		if !ok {
			t.Fatalf("no sqlc query %s in db/", name)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // nothing was written
		if _, err := tx.Exec(ctx, begin+"; SET LOCAL enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
		// Twice: as the planner likes it, and with nested loops off. A join that is bounded
		// only while the planner picks a nested loop over the few outer rows it expects (the
		// 30-day window's transactions, then each one's postings) is the plan of a database's
		// statistics, not of the statement: with other statistics it hashes the inner side
		// whole (all the postings of the account, a year and more of them).
		for _, nestloop := range []string{"on", "off"} {
			if _, err := tx.Exec(ctx, "SET LOCAL enable_nestloop = "+nestloop); err != nil {
				t.Fatal(err)
			}
			// The simple protocol: the statement's $n stay parameters of the generic plan.
			res, err := tx.Conn().PgConn().Exec(ctx, "EXPLAIN (FORMAT JSON, GENERIC_PLAN) "+sql).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var plan []map[string]any
			if err := json.Unmarshal(res[0].Rows[0][0], &plan); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, rel := range w.whole(plan[0]["Plan"], false) {
				if table, _, _ := strings.Cut(rel, " "); slices.Contains(ownerTables, table) || strings.Contains(rel, "every row") {
					raw, _ := json.MarshalIndent(plan, "", " ")
					t.Errorf("%s (enable_nestloop %s) reads %s whole: no index serves it\n%s", name, nestloop, rel, raw)
				}
			}
		}
	}
	owner := md5UUID("1/owner/1") // the largest owner
	for _, name := range hotPath {
		t.Run(name, func(t *testing.T) {
			explain(t, d.AppURL, "SELECT set_config('app.owner_id', '"+owner+"', true), "+
				"set_config('hnsw.iterative_scan', 'relaxed_order', true)", name)
		})
	}
	for _, name := range doorPath {
		t.Run(name, func(t *testing.T) { explain(t, d.DoorURL, "SELECT 1", name) })
	}
}

// walks finds the relations a plan reads whole.
type walks struct {
	populated, partial []string
	leading            map[string]string   // index → its first column
	table              map[string]string   // index → its table
	settingKeys        map[string][]string // table → its columns that name a settings row (a foreign key to a table that does not grow)
}

// growing are the tables whose rows per owner grow with use (history), as opposed to the
// few rows of an owner's settings (channels, rules, accounts) and its current facts (one per
// key, memory_facts_owner_key: MatchFacts reads them all, a fact sheet rather than a log):
// reading all of an owner's rows of these costs more every day.
var growing = []string{"turns", "tool_calls", "messages", "audit_log", "memory_chunks", "memory_outbox",
	"conversations", "ledger_transactions", "ledger_postings", "documents", "job_runs", "webhook_deliveries",
	"tasks", "notifications"}

// partition is the suffix of a partition's name.
var partition = regexp.MustCompile(`_p\d+$`)

// broad says an index condition names no more than the owner and its settings rows: the
// owner alone, or the owner and an account — every row of the owner's history, or of one
// account's (the ledger's postings of the checking account are all its transactions).
func (w walks) broad(table, cond string) bool {
	if cond == "" {
		return false
	}
	// "((owner_id = $1) AND (account_id = a.id))": each clause's left-hand side, a column or
	// an expression such as md5(text).
	for clause := range strings.SplitSeq(cond, " AND ") {
		lhs, _, _ := strings.Cut(strings.TrimLeft(clause, "("), " ")
		if lhs != "owner_id" && !slices.Contains(w.settingKeys[table], lhs) {
			return false
		}
	}
	return true
}

// whole is what a plan node and its children read whole: a sequential scan, an index scan
// with neither a condition nor an order, or one whose condition leaves out the index's first
// column (with enable_seqscan off the planner may walk an unrelated index end to end instead
// of the table); and, of a growing table, every row of the owner — an index scan on the owner
// alone (or on the owner and one of its settings rows, such as an account) that no LIMIT
// stops (a Sort, an aggregate, a hash or a bitmap between them reads it all).
// bounded says a LIMIT above the node takes rows as they come.
func (w walks) whole(node any, bounded bool) []string {
	n, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	rel, _ := n["Relation Name"].(string)
	ix, _ := n["Index Name"].(string)
	if rel == "" { // a Bitmap Index Scan names its index only
		rel = w.table[ix]
	}
	cond, _ := n["Index Cond"].(string)
	table := partition.ReplaceAllString(rel, "") // memory_chunks_p3 is memory_chunks
	everyRowOfOwner := slices.Contains(growing, table) && w.broad(table, cond)
	switch typ := n["Node Type"]; typ {
	case "Seq Scan":
		out = append(out, rel)
	case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
		if typ != "Bitmap Index Scan" && cond == "" && n["Order By"] == nil && slices.Contains(w.populated, rel) && !slices.Contains(w.partial, ix) {
			out = append(out, rel)
		}
		// A condition on a later column of a btree does not narrow the scan: PostgreSQL reads
		// the whole index and checks it on each entry.
		if col := w.leading[ix]; cond != "" && col != "" && !strings.Contains(cond, "("+col+" ") && !slices.Contains(w.partial, ix) {
			out = append(out, rel)
		}
		if everyRowOfOwner && (typ == "Bitmap Index Scan" || !bounded) {
			out = append(out, rel+" (every row of the owner, through "+ix+")")
		}
	case "Limit":
		bounded = true
	case "Result", "Append", "Merge Append", "Subquery Scan", "Nested Loop", "Unique", "LockRows", "ModifyTable",
		"Incremental Sort": // sorts rows already in order of its first keys, as they come
	default: // Sort, Aggregate, Hash, Materialize, BitmapAnd, Bitmap Heap Scan, …: they read all their input
		bounded = false
	}
	children, _ := n["Plans"].([]any)
	for _, c := range children {
		out = append(out, w.whole(c, bounded)...)
	}
	return out
}

// sqlcQueries are the statements sqlc generated (db/*.sql.go), by name: the SQL the store
// runs, with its $n parameters.
func sqlcQueries(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../db/*.sql.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no db/*.sql.go: %v", err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if rest, ok := strings.CutPrefix(s, "-- name: "); ok {
				name, _, _ := strings.Cut(rest, " ")
				out[name] = s
			}
			return true
		})
	}
	return out
}
