package benchload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stewardhq/steward/internal/autonomy"
)

// Owner is one owner the load runs as: its API key and its incoming webhook.
type Owner struct {
	ID, APIKey         string
	HookID, HookSecret string
}

// Workload is the shape of the load.
type Workload struct {
	// Conversations is how many conversations each owner runs at once; each repeats chat →
	// suspended, confirm → completed. A conversation is left for a new one after Turns turns.
	Conversations, Turns int
	// Duration is how long new work starts; MaxCycles, when above zero, bounds the chats
	// started over the run as well.
	Duration  time.Duration
	MaxCycles int
	// Think is the mean pause between two actions of one conversation (uniform in ½–1½×);
	// each owner's side actions (webhooks, memory) come twice as far apart.
	Think time.Duration
	// Every RaceEvery-th confirm is sent RaceWidth times at once (exactly one may win); every
	// DenyEvery-th decision is a denial. Zero turns either off.
	RaceEvery, RaceWidth, DenyEvery int
	// Grace is how long, after Duration, the suspended turns are still confirmed and the
	// server's background work (webhook runs, memory ingestion) is waited for.
	Grace time.Duration
	// Log receives progress lines.
	Log io.Writer
}

// load is one run of a Workload against a server.
type load struct {
	w      Workload
	base   string
	http   *http.Client
	stats  *stats
	ledger *ledger
	// work ends at the Duration (no new work starts), grace at Duration + Grace: requests
	// run on it, so one in flight at the Duration gets its answer, and suspended turns are
	// still confirmed.
	work, grace context.Context
	cycles      atomic.Int64 // chats started
	confirms    atomic.Int64 // confirms sent (every RaceEvery-th races)
	decisions   atomic.Int64 // decisions made (every DenyEvery-th denies)
	requests    atomic.Int64 // the X-Request-Id of each request
}

// drive runs the workload of every owner until the Duration (or MaxCycles) and confirms the
// turns still suspended within the Grace.
func (l *load) drive(owners []Owner) {
	var wg sync.WaitGroup
	ramp := min(l.w.Think, l.w.Duration/4) // the owners start spread over this
	for i, o := range owners {
		for c := range l.w.Conversations {
			wg.Go(func() {
				if l.pause(l.work, jitter(ramp)) {
					l.conversation(o, fmt.Sprintf("o%d-c%d", i, c))
				}
			})
		}
		wg.Go(func() {
			if l.pause(l.work, jitter(ramp)) {
				l.side(o, fmt.Sprintf("o%d", i))
			}
		})
	}
	wg.Wait()
}

// jitter is a random duration in ½d–1½d.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d)
}

// pause waits d, or until ctx ends: false then.
func (l *load) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// more says whether new work may start: before the Duration and within MaxCycles.
func (l *load) more() bool {
	return l.work.Err() == nil && (l.w.MaxCycles <= 0 || l.cycles.Load() < int64(l.w.MaxCycles))
}

// turnView is the part of a turn's view the load reads.
type turnView struct {
	TurnID         string `json:"turn_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Answer         string `json:"answer"`
	Pending        []struct {
		CallID   string `json:"call_id"`
		Tool     string `json:"tool"`
		ArgsHash string `json:"args_hash"`
	} `json:"pending"`
}

// conversation is one of an owner's conversations: chat → suspended on create_task, a pause,
// confirm (approve or deny, sometimes several at once) → completed, a pause, again.
func (l *load) conversation(o Owner, name string) {
	var conv string
	for n := 1; l.more(); n++ {
		if (n-1)%max(l.w.Turns, 1) == 0 {
			conv = ""
		}
		l.cycles.Add(1)
		marker := fmt.Sprintf("%s-%d", name, n)
		body, _ := json.Marshal(map[string]any{"message": "remind me to buy milk [" + marker + "]", "conversation_id": conv})
		status, raw, _ := l.do(l.grace, "POST /v1/chat", http.MethodPost, "/v1/chat", o.APIKey, jsonHeader, body)
		var v turnView
		switch {
		case status != http.StatusOK:
			// Refused (429 when the owner's turns are all running) or failed: counted by
			// status; nothing was accepted, nothing is owed.
		case json.Unmarshal(raw, &v) != nil || v.Status != "suspended" || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task":
			l.ledger.anomaly("chat %s: want a turn suspended on create_task, got %.300s", marker, raw)
		default:
			conv = v.ConversationID
			l.ledger.chat(o.ID, v.TurnID, marker)
			l.pause(l.grace, jitter(l.w.Think)) // the owner reads the card; past the Duration too
			l.resolve(o, v)
		}
		if !l.pause(l.work, jitter(l.w.Think)) {
			return
		}
	}
}

// resolve decides a suspended turn's call — an approval, or every DenyEvery-th a denial —
// until it is decided or the Grace ends. Every RaceEvery-th confirm is first sent RaceWidth
// times at once. A 429 is retried after its Retry-After; a 5xx or no response is retried, and
// a 409 after one of those is read as "an earlier attempt decided it" when the turn is
// completed (a client that lost the answer).
func (l *load) resolve(o Owner, v turnView) {
	approve := l.w.DenyEvery <= 0 || l.decisions.Add(1)%int64(l.w.DenyEvery) != 0
	body, _ := json.Marshal(map[string]any{"decisions": []map[string]any{
		{"call_id": v.Pending[0].CallID, "approve": approve, "args_hash": v.Pending[0].ArgsHash}}})
	path := "/v1/turns/" + v.TurnID + "/confirm"
	decided := func(raw []byte) {
		var done turnView
		if err := json.Unmarshal(raw, &done); err != nil || done.Status != "completed" || done.Answer == "" {
			l.ledger.anomaly("confirm %s: want a completed turn with an answer, got %.300s", v.TurnID, raw)
		}
		l.ledger.decide(v.TurnID, approve)
	}
	lost := false // an attempt got no answer or a 5xx: it may have decided the turn
	if l.w.RaceEvery > 0 && l.w.RaceWidth > 1 && l.confirms.Add(1)%int64(l.w.RaceEvery) == 0 {
		won, raw, unsure := l.race(o, v.TurnID, path, body)
		if won {
			decided(raw)
			return
		}
		lost = unsure
	}
	for l.grace.Err() == nil {
		status, raw, h := l.do(l.grace, "POST /v1/turns/{id}/confirm", http.MethodPost, path, o.APIKey, jsonHeader, body)
		switch {
		case status == http.StatusOK:
			decided(raw)
			return
		case status == http.StatusTooManyRequests:
			l.pause(l.grace, retryAfter(h))
		case status == http.StatusConflict && lost:
			if l.completed(o, v.TurnID) {
				l.ledger.decide(v.TurnID, approve)
			} else {
				l.ledger.anomaly("confirm %s: 409 after a lost attempt, and the turn is not completed", v.TurnID)
			}
			return
		case status == 0 || status >= 500:
			lost = true
			l.pause(l.grace, time.Second)
		default:
			l.ledger.anomaly("confirm %s: %d %.300s", v.TurnID, status, raw)
			return
		}
	}
	l.ledger.anomaly("confirm %s: still suspended when the grace period ended", v.TurnID)
}

// race sends the same confirm width times at once. Exactly one may win (200); the others
// must be refused with 409 — a 429 (the owner's turns all running) or a 5xx is not a
// verdict. It reports whether one won (with its answer) and whether an attempt got no answer
// or a 5xx (it may have decided the turn).
func (l *load) race(o Owner, turnID, path string, body []byte) (won bool, answer []byte, unsure bool) {
	type result struct {
		status int
		raw    []byte
	}
	results := make([]result, l.w.RaceWidth)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			s, raw, _ := l.do(l.grace, "POST /v1/turns/{id}/confirm (concurrent)", http.MethodPost, path, o.APIKey, jsonHeader, body)
			results[i] = result{s, raw}
		})
	}
	wg.Wait()
	var wins, conflicts int
	for _, r := range results {
		switch {
		case r.status == http.StatusOK:
			wins++
			answer = r.raw
		case r.status == http.StatusConflict:
			conflicts++
		case r.status == 0 || r.status >= 500:
			unsure = true
		}
	}
	l.ledger.race(turnID, wins, conflicts, len(results))
	return wins > 0, answer, unsure
}

// completed reads whether a turn is completed (GET /v1/turns/{id}).
func (l *load) completed(o Owner, turnID string) bool {
	status, raw, _ := l.do(l.grace, "GET /v1/turns/{id}", http.MethodGet, "/v1/turns/"+turnID, o.APIKey, nil, nil)
	var v turnView
	return status == http.StatusOK && json.Unmarshal(raw, &v) == nil && v.Status == "completed"
}

// side is an owner's other traffic, in turn: a webhook delivery, a fact, a memory search, the
// last delivery again (a replay: the same run, nothing new), another delivery, a document.
func (l *load) side(o Owner, name string) {
	var last delivery
	for i := 0; l.more(); i++ {
		switch i % 6 {
		case 0, 4:
			last = l.deliver(o, delivery{id: fmt.Sprintf("%s-%d", name, i), body: fmt.Sprintf(`{"event":"load","owner":%q,"n":%d}`, name, i)})
		case 1:
			body, _ := json.Marshal(map[string]string{"content": fmt.Sprintf("%s likes tea number %d", name, i)})
			if status, raw, _ := l.do(l.grace, "POST /v1/memory/facts", http.MethodPost, "/v1/memory/facts", o.APIKey, jsonHeader, body); status == http.StatusCreated {
				l.ledger.fact(o.ID)
			} else if status == http.StatusOK {
				l.ledger.anomaly("fact %s-%d: a new fact answered 200 (already known): %.200s", name, i, raw)
			}
		case 2:
			l.do(l.grace, "GET /v1/memory/search", http.MethodGet, "/v1/memory/search?q=milk&k=5", o.APIKey, nil, nil)
		case 3:
			if last.runID != "" {
				l.deliver(o, last)
			}
		case 5:
			body := fmt.Appendf(nil, "Notes of %s, number %d.\n\nThe milk is in the fridge; the tea is in the cupboard.\n", name, i)
			path := fmt.Sprintf("/v1/documents?name=%s-%d.txt", name, i)
			if status, _, _ := l.do(l.grace, "POST /v1/documents", http.MethodPost, path, o.APIKey, http.Header{"Content-Type": {"text/plain"}}, body); status == http.StatusCreated {
				l.ledger.document(o.ID)
			}
		}
		if !l.pause(l.work, jitter(2*l.w.Think)) {
			return
		}
	}
}

// delivery is one webhook delivery: its webhook-id, body and, once accepted, its run.
type delivery struct {
	id, body, runID string
}

// deliver posts d to the owner's webhook, signed with its secret (a fresh timestamp each
// time). A new delivery must be accepted (202) with a new run; a replay (d.runID set) must
// answer 200 with the same run and do nothing.
func (l *load) deliver(o Owner, d delivery) delivery {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	sig, err := autonomy.Sign(o.HookSecret, d.id, ts, []byte(d.body))
	if err != nil {
		l.ledger.anomaly("sign delivery %s: %v", d.id, err)
		return d
	}
	h := http.Header{"Content-Type": {"application/json"}, autonomy.HeaderID: {d.id},
		autonomy.HeaderTimestamp: {ts}, autonomy.HeaderSignature: {sig}}
	status, raw, _ := l.do(l.grace, "POST /webhooks/{hook_id}", http.MethodPost, "/webhooks/"+o.HookID, "", h, []byte(d.body))
	var rc struct {
		RunID  string `json:"run_id"`
		Replay bool   `json:"replay"`
	}
	_ = json.Unmarshal(raw, &rc)
	switch replay := d.runID != ""; {
	case status == http.StatusAccepted && !replay && rc.RunID != "":
		d.runID = rc.RunID
		l.ledger.delivery(o.ID, d.id, rc.RunID)
	case status == http.StatusOK && replay:
		l.ledger.replay(rc.Replay && rc.RunID == d.runID, d.id)
	case status == http.StatusAccepted || status == http.StatusOK:
		l.ledger.anomaly("webhook %s (replay %t): %d %.200s", d.id, replay, status, raw)
	}
	return d
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

// do sends one request and records it under route: its status (0 when no response came) and
// latency; a 5xx or no response is kept with its request id, to find it in the server's log.
// key, when set, is sent as the bearer token.
func (l *load) do(ctx context.Context, route, method, path, key string, h http.Header, body []byte) (int, []byte, http.Header) {
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, bytes.NewReader(body))
	if err != nil {
		l.ledger.anomaly("%s: %v", route, err)
		return 0, nil, nil
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	id := fmt.Sprintf("load-%d", l.requests.Add(1))
	req.Header.Set("X-Request-Id", id)
	start := time.Now()
	resp, err := l.http.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	d := time.Since(start)
	if err != nil {
		if ctx.Err() != nil { // the run ended while this request waited: not the server's doing
			return 0, nil, nil
		}
		l.stats.record(route, 0, d, id, err.Error())
		return 0, nil, nil
	}
	l.stats.record(route, resp.StatusCode, d, id, string(raw))
	return resp.StatusCode, raw, resp.Header
}

// retryAfter is a response's Retry-After in seconds, or one second.
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s > 0 && s < 60 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}
