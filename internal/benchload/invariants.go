package benchload

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Check is one invariant and whether it held, with what was found.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// checkInvariants reads the database (as the superuser: every owner's rows) against what the
// client saw accepted and decided (l), after the load and the server's background work ended.
func checkInvariants(ctx context.Context, conn *pgx.Conn, l *ledger) ([]Check, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var approved, denied, chatTurns, markers, runs []string
	for turn, ok := range l.decisions {
		if ok {
			approved = append(approved, turn)
		} else {
			denied = append(denied, turn)
		}
	}
	for _, c := range l.chats {
		chatTurns, markers = append(chatTurns, c.turn), append(markers, c.marker)
	}
	for _, d := range l.deliveries {
		runs = append(runs, d.run)
	}
	var checks []Check
	for _, f := range []func() (Check, error){
		func() (Check, error) { return turnsSettled(ctx, conn) },
		func() (Check, error) { return approvedRanOnce(ctx, conn, approved) },
		func() (Check, error) { return unapprovedNeverRan(ctx, conn, approved, denied) },
		func() (Check, error) { return noDuplicateJournal(ctx, conn) },
		func() (Check, error) { return noLostMessage(ctx, conn, chatTurns, markers) },
		func() (Check, error) { return deliveriesRanOnce(ctx, conn, runs, l.replays, l.replaysBroken) },
		func() (Check, error) { return memoryIngested(ctx, conn, l.facts, l.documents, chatTurns) },
	} {
		c, err := f()
		if err != nil {
			return nil, fmt.Errorf("invariant %q: %w", c.Name, err)
		}
		checks = append(checks, c)
	}
	checks = append(checks, Check{
		Name: "concurrent confirms of one turn: exactly one wins, the others get 409",
		OK:   len(l.raceBroken) == 0,
		Detail: fmt.Sprintf("%d sent, %d with a verdict (the rest had a 429 among them)%s",
			l.races, l.raceVerdicts, listed(l.raceBroken)),
	}, Check{
		Name:   "every answer is what the API promises",
		OK:     l.anomalyCount == 0,
		Detail: fmt.Sprintf("%d unexpected%s", l.anomalyCount, listed(l.anomalies)),
	})
	return checks, nil
}

// listed prints problems one per line after a colon, or nothing.
func listed(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ":\n      " + strings.Join(items, "\n      ")
}

func turnsSettled(ctx context.Context, conn *pgx.Conn) (Check, error) {
	c := Check{Name: "no turn running or resuming"}
	rows, err := conn.Query(ctx, `SELECT status, count(*) FROM turns GROUP BY status ORDER BY status`)
	if err != nil {
		return c, err
	}
	var parts []string
	stuck := 0
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return c, err
		}
		parts = append(parts, fmt.Sprintf("%s %d", status, n))
		if status == "running" || status == "resuming" {
			stuck += n
		}
	}
	c.OK, c.Detail = stuck == 0, "turns: "+strings.Join(parts, ", ")
	return c, rows.Err()
}

// approvedRanOnce: each approved turn's create_task succeeded once, each succeeded call's task
// exists once, and there are as many tasks as approvals.
func approvedRanOnce(ctx context.Context, conn *pgx.Conn, approved []string) (Check, error) {
	c := Check{Name: "every approved write ran exactly once"}
	var notOnce, calls, tasks, missing, shared int
	err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM unnest($1::uuid[]) a(id) WHERE (SELECT count(*) FROM tool_calls k
			WHERE k.turn_id = a.id AND k.tool = 'create_task' AND k.status = 'succeeded') <> 1),
		(SELECT count(*) FROM tool_calls WHERE tool = 'create_task' AND status = 'succeeded'),
		(SELECT count(*) FROM tasks),
		(SELECT count(*) FROM tool_calls k WHERE k.tool = 'create_task' AND k.status = 'succeeded'
			AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.owner_id = k.owner_id AND t.id::text = k.result->'task'->>'id')),
		(SELECT count(*) FROM (SELECT 1 FROM tool_calls WHERE tool = 'create_task' AND status = 'succeeded'
			GROUP BY result->'task'->>'id' HAVING count(*) > 1) s)`, approved).Scan(&notOnce, &calls, &tasks, &missing, &shared)
	c.OK = notOnce == 0 && missing == 0 && shared == 0 && calls == len(approved) && tasks == len(approved)
	c.Detail = fmt.Sprintf("%d approved; succeeded create_task calls %d, tasks %d; approvals not run exactly once %d, calls without their task %d, tasks claimed by two calls %d",
		len(approved), calls, tasks, notOnce, missing, shared)
	return c, err
}

// unapprovedNeverRan: no write call left pending or denied unless its turn was approved —
// webhook turns' calls wait for the owner — and every denied turn's call is denied.
func unapprovedNeverRan(ctx context.Context, conn *pgx.Conn, approved, denied []string) (Check, error) {
	c := Check{Name: "no unapproved write ran"}
	var ran, deniedRan, pending int
	err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM tool_calls WHERE kind = 'write' AND status NOT IN ('pending', 'denied') AND NOT (turn_id = ANY ($1::uuid[]))),
		(SELECT count(*) FROM tool_calls WHERE turn_id = ANY ($2::uuid[]) AND status <> 'denied'),
		(SELECT count(*) FROM tool_calls WHERE status = 'pending')`, approved, denied).Scan(&ran, &deniedRan, &pending)
	c.OK = ran == 0 && deniedRan == 0
	c.Detail = fmt.Sprintf("%d denied; write calls past pending without an approval %d, denied turns' calls not denied %d; calls still waiting for the owner %d",
		len(denied), ran, deniedRan, pending)
	return c, err
}

// noDuplicateJournal: no call journaled twice, no turn event recorded twice.
func noDuplicateJournal(ctx context.Context, conn *pgx.Conn) (Check, error) {
	c := Check{Name: "no duplicate journal row"}
	var calls, events int
	err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM tool_calls GROUP BY turn_id, call_id HAVING count(*) > 1) d),
		(SELECT count(*) FROM (SELECT 1 FROM audit_log WHERE turn_id IS NOT NULL AND seq > 0
			GROUP BY turn_id, seq HAVING count(*) > 1) d)`).Scan(&calls, &events)
	c.OK = calls == 0 && events == 0
	c.Detail = fmt.Sprintf("calls journaled twice %d, turn events recorded twice %d", calls, events)
	return c, err
}

// noLostMessage: every chat the client saw accepted is completed with an answer, and holds
// its user message (its marker) and the model's.
func noLostMessage(ctx context.Context, conn *pgx.Conn, turns, markers []string) (Check, error) {
	c := Check{Name: "no lost message: every accepted chat has its message and an answer"}
	rows, err := conn.Query(ctx, `SELECT c.turn::text, c.marker, coalesce(t.status, 'missing') FROM unnest($1::uuid[], $2::text[]) c(turn, marker)
		LEFT JOIN turns t ON t.id = c.turn
		WHERE t.id IS NULL OR t.status <> 'completed' OR coalesce(t.answer, '') = ''
			OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.turn_id = c.turn AND m.role = 'user' AND strpos(m.content::text, c.marker) > 0)
			OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.turn_id = c.turn AND m.role = 'model')`, turns, markers)
	if err != nil {
		return c, err
	}
	var lost []string
	n := 0
	for rows.Next() {
		var turn, marker, status string
		if err := rows.Scan(&turn, &marker, &status); err != nil {
			return c, err
		}
		if n++; len(lost) < maxListed {
			lost = append(lost, fmt.Sprintf("turn %s [%s]: %s", turn, marker, status))
		}
	}
	var unseen int
	if err := rows.Err(); err != nil {
		return c, err
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM turns WHERE trigger = 'chat' AND NOT (id = ANY ($1::uuid[]))`, turns).Scan(&unseen); err != nil {
		return c, err
	}
	c.OK = n == 0
	c.Detail = fmt.Sprintf("%d accepted, %d without their message or answer; chat turns the client got no answer for %d%s", len(turns), n, unseen, listed(lost))
	return c, nil
}

// deliveriesRanOnce: every accepted delivery is one delivery row with one run, which ended
// (suspended on its write, or completed) and did not fail; a replay answered its first run.
func deliveriesRanOnce(ctx context.Context, conn *pgx.Conn, runs []string, replays int, broken []string) (Check, error) {
	c := Check{Name: "every accepted webhook delivery ran once; replays ran nothing"}
	var missing, deliveries, jobs, unfinished, failed int
	err := conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM unnest($1::uuid[]) r(id) WHERE NOT EXISTS (SELECT 1 FROM job_runs j WHERE j.id = r.id)),
		(SELECT count(*) FROM webhook_deliveries),
		(SELECT count(*) FROM job_runs WHERE trigger = 'webhook'),
		(SELECT count(*) FROM job_runs WHERE trigger = 'webhook' AND status IN ('queued', 'running')),
		(SELECT count(*) FROM job_runs WHERE trigger = 'webhook' AND status = 'failed')`, runs).Scan(&missing, &deliveries, &jobs, &unfinished, &failed)
	c.OK = missing == 0 && deliveries == len(runs) && jobs == len(runs) && unfinished == 0 && failed == 0 && len(broken) == 0
	c.Detail = fmt.Sprintf("%d accepted, %d replayed (%d answered otherwise); delivery rows %d, runs %d, without a run %d, unfinished %d, failed %d%s",
		len(runs), replays, len(broken), deliveries, jobs, missing, unfinished, failed, listed(broken))
	return c, err
}

// memoryIngested: every fact and document accepted is stored (per owner), each completed
// exchange was queued for memory, and the memory outbox is drained.
func memoryIngested(ctx context.Context, conn *pgx.Conn, facts, documents map[string]int, chats []string) (Check, error) {
	c := Check{Name: "memory ingestion lost nothing and is drained"}
	count := func(sql string) (map[string]int, error) {
		rows, err := conn.Query(ctx, sql)
		if err != nil {
			return nil, err
		}
		got := map[string]int{}
		for rows.Next() {
			var owner string
			var n int
			if err := rows.Scan(&owner, &n); err != nil {
				return nil, err
			}
			got[owner] = n
		}
		return got, rows.Err()
	}
	gotFacts, err := count(`SELECT owner_id::text, count(*) FROM memory_facts WHERE source = 'api' GROUP BY owner_id`)
	if err != nil {
		return c, err
	}
	gotDocs, err := count(`SELECT owner_id::text, count(*) FROM documents GROUP BY owner_id`)
	if err != nil {
		return c, err
	}
	var unqueued, pending, retried int
	err = conn.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM unnest($1::uuid[]) c(turn) JOIN turns t ON t.id = c.turn
			WHERE t.status = 'completed' AND NOT EXISTS (SELECT 1 FROM memory_outbox o WHERE o.turn_id = c.turn)),
		(SELECT count(*) FROM memory_outbox WHERE done_at IS NULL),
		(SELECT count(*) FROM memory_outbox WHERE attempts > 1)`, chats).Scan(&unqueued, &pending, &retried)
	factsOK, docsOK := maps.Equal(gotFacts, facts), maps.Equal(gotDocs, documents)
	c.OK = factsOK && docsOK && unqueued == 0 && pending == 0
	c.Detail = fmt.Sprintf("facts %d stored of %d accepted, documents %d of %d (per owner equal: %t, %t); completed chats not queued for memory %d; outbox not done %d (retried %d)",
		sum(gotFacts), sum(facts), sum(gotDocs), sum(documents), factsOK, docsOK, unqueued, pending, retried)
	return c, err
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
