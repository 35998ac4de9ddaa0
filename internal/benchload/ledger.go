package benchload

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ledger is what the load's client saw accepted and decided: what the database must show at
// the end (invariants.go).
type ledger struct {
	mu sync.Mutex
	// chats are the turns accepted (suspended) with the marker their message carries;
	// decisions the decided ones: true approved, false denied.
	chats     []chat
	decisions map[string]bool
	// races counts the concurrent confirms: a verdict each (exactly one 200, the others
	// 409) or not (a 429 or 5xx among them); raceBroken are those that broke the rule.
	races, raceVerdicts int
	raceBroken          []string
	deliveries          []delivered
	replays             int
	replaysBroken       []string
	facts, documents    map[string]int // per owner
	anomalies           []string
	anomalyCount        int
}

type chat struct{ owner, turn, marker string }

type delivered struct{ owner, id, run string }

// maxListed caps each list of problems a report prints.
const maxListed = 20

func newLedger() *ledger {
	return &ledger{decisions: map[string]bool{}, facts: map[string]int{}, documents: map[string]int{}}
}

func (l *ledger) chat(owner, turn, marker string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.chats = append(l.chats, chat{owner, turn, marker})
}

func (l *ledger) decide(turn string, approve bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.decisions[turn] = approve
}

// race records a concurrent confirm of n requests: wins 200s and conflicts 409s.
func (l *ledger) race(turn string, wins, conflicts, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.races++
	switch {
	case wins > 1 || (wins == 0 && conflicts == n):
		// Two winners ran the decision twice; all refused means nobody decided it.
		l.raceBroken = append(l.raceBroken, fmt.Sprintf("turn %s: %d of %d won, %d refused with 409", turn, wins, n, conflicts))
	case wins == 1 && conflicts == n-1:
		l.raceVerdicts++
	}
}

func (l *ledger) delivery(owner, id, run string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.deliveries = append(l.deliveries, delivered{owner, id, run})
}

// replay records a delivery sent again: ok when it answered the first run, as a replay.
func (l *ledger) replay(ok bool, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.replays++
	if !ok {
		l.replaysBroken = append(l.replaysBroken, id)
	}
}

func (l *ledger) fact(owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.facts[owner]++
}

func (l *ledger) document(owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.documents[owner]++
}

// anomaly records an answer the load did not expect (the first maxListed are kept).
func (l *ledger) anomaly(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.anomalyCount++
	if len(l.anomalies) < maxListed {
		l.anomalies = append(l.anomalies, fmt.Sprintf(format, args...))
	}
}

// stats are the responses per route.
type stats struct {
	mu     sync.Mutex
	routes map[string]*route
	// failed are the first 5xx responses and requests without one, with their request ids.
	failed []failure
}

// route is one route's responses: latency of each, and how many per status (0: none came).
type route struct {
	latencies []time.Duration
	statuses  map[int]int
}

type failure struct {
	route, requestID string
	status           int
	detail           string
}

func newStats() *stats { return &stats{routes: map[string]*route{}} }

func (s *stats) record(name string, status int, d time.Duration, requestID, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.routes[name]
	if r == nil {
		r = &route{statuses: map[int]int{}}
		s.routes[name] = r
	}
	r.latencies = append(r.latencies, d)
	r.statuses[status]++
	if (status == 0 || status >= 500) && len(s.failed) < maxListed {
		s.failed = append(s.failed, failure{name, requestID, status, strings.TrimSpace(detail)})
	}
}

// names are the routes, sorted.
func (s *stats) names() []string {
	var names []string
	for n := range s.routes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
