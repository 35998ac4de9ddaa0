package steward

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Controls are the kill switches that apply to one owner.
type Controls struct {
	OwnerKilled  bool       `json:"owner_stopped"`
	OwnerReason  string     `json:"owner_reason,omitempty"`
	GlobalKilled bool       `json:"deployment_stopped"`
	GlobalReason string     `json:"deployment_reason,omitempty"`
	Since        *time.Time `json:"since,omitempty"`
}

// DailyUsage is an owner's budget use today and their limits.
type DailyUsage struct {
	Messages        int   `json:"messages"`
	CostMicros      int64 `json:"cost_micros"`
	MessageLimit    int   `json:"message_limit"`
	CostLimitMicros int64 `json:"cost_limit_micros"`
}

// Money is an amount in integer minor units (cents) of an ISO 4217 currency.
type Money struct {
	Minor    int64  `json:"amount_minor"`
	Currency string `json:"currency"`
}

// IsCurrencyCode reports whether code has the form of an ISO 4217 code: three capital
// letters.
func IsCurrencyCode(code string) bool {
	if len(code) != 3 {
		return false
	}
	for _, c := range code {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// minorDigits are the ISO 4217 currencies whose minor unit is not a hundredth.
var minorDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// MaxDailyDollarsMicros bounds a daily cost budget or cap: $1,000,000.
const MaxDailyDollarsMicros = 1_000_000 * 1_000_000

// ParseDollars reads a non-negative dollar amount with at most 6 decimals, at most
// MaxDailyDollarsMicros, as an exact number of millionths of a dollar (no floating point:
// "4.35" is 4350000). Its errors complete a sentence naming the amount ("--cost-usd …").
func ParseDollars(s string) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if !isDigits(whole) || (dot && !isDigits(frac)) {
		return 0, fmt.Errorf("must be a dollar amount such as 5 or 0.25, got %q", s)
	}
	if len(frac) > 6 {
		return 0, fmt.Errorf("has at most 6 decimals (millionths of a dollar), got %q", s)
	}
	tooMuch := fmt.Errorf("is at most $1000000 a day, got %q", s)
	if len(whole) > 7 {
		return 0, tooMuch
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	micros := w*1_000_000 + f
	if micros > MaxDailyDollarsMicros {
		return 0, tooMuch
	}
	return micros, nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FormatMoney is an amount in minor units as a person reads it: "-12.34 EUR", "1500 JPY".
func FormatMoney(minor int64, currency string) string {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if digits > 0 {
		if len(s) <= digits {
			s = strings.Repeat("0", digits-len(s)+1) + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if neg {
		s = "-" + s
	}
	return s + " " + currency
}

// Cap is a hard money limit: per action, and per rolling window.
type Cap struct {
	Currency       string        `json:"currency"`
	PerActionMinor int64         `json:"per_action_minor"`
	WindowMinor    int64         `json:"window_minor"`
	Window         time.Duration `json:"window"`
}

// Admission is a turn asking to start or resume.
type Admission struct {
	OwnerID uuid.UUID
	Trigger Trigger
	// Resume is true for a confirm: a resume is never refused for message quota.
	Resume bool
}

// Verdict is the gate's answer for one write call.
type Verdict string

// Verdicts: run it, refuse it, or suspend the turn for a human.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	Ask   Verdict = "ask"
)

// RuleScope says what may run a write without the owner's yes to that very call: a standing
// allow rule, auto mode (the owner's blanket yes), or nothing. A tool declares one
// (tools.Tool.Rules); the loop resolves it for each call (GateRequest.Rules).
type RuleScope uint8

const (
	// RulesByKind, the zero value, is a tool's default: a standing allow rule may run a
	// write that stays in Steward's database and moves no money; one that moves money or
	// reaches outside Steward (tools.Tool.External) is asked every time. Auto mode may run
	// either. Resolved, it is RulesMayAllow or RulesNeverAllow.
	RulesByKind RuleScope = iota
	// RulesMayAllow: a standing allow rule may run it, even a write reaching outside
	// Steward: for such a write, the operator's explicit choice (run_command with
	// STEWARD_SHELL_RULES=on).
	RulesMayAllow
	// RulesNeverAllow: no standing allow rule runs it, it is asked every time; auto mode
	// may run it.
	RulesNeverAllow
	// OnlyOwnerYes: nothing but the owner's yes runs it, every time: no standing rule, no
	// auto mode (an order to a broker).
	OnlyOwnerYes
)

// RulesMayRun reports whether a standing allow rule may run a call of this resolved scope
// (RulesByKind here is a request that did not say: as RulesMayAllow).
func (s RuleScope) RulesMayRun() bool { return s == RulesByKind || s == RulesMayAllow }

// AutoMayRun reports whether auto mode may run a call of this scope.
func (s RuleScope) AutoMayRun() bool { return s != OnlyOwnerYes }

// GateRequest is one write call the model asked for.
type GateRequest struct {
	OwnerID uuid.UUID
	TurnID  uuid.UUID
	Trigger Trigger
	// Untrusted says untrusted text (recalled webhook data, …) is in the turn's context:
	// like a webhook turn, its writes are never allowed by a standing rule or auto mode.
	Untrusted bool
	CallID    string
	Tool      string
	Args      json.RawMessage
	// MovesMoney is set for calls of tools that declare an amount (tools.MoneyArgs).
	MovesMoney bool
	// Money is the amount the call moves, for tools that declare one; nil when it could not
	// be read, and the gate then denies the call (money fails closed, ARCHITECTURE.md §2).
	Money *Money
	// Rules is what may run the call besides the owner's yes to it, as the loop resolved it
	// from its tool (tools.Tool.RuleScope): RulesMayAllow, RulesNeverAllow (money, egress, …)
	// or OnlyOwnerYes (no auto mode either).
	Rules RuleScope
	// Egress is set for calls that can carry data to a destination the owner did not fix in
	// advance (an External tool, or web_fetch of a URL not in the owner's message).
	Egress bool
	// Taint is the source that tainted the turn (State.Taint). A tainted Egress call is
	// always asked (Reason "tainted"): no standing rule or auto mode runs it.
	Taint string
}

// GateDecision is a verdict with who or what decided it, for the journal and the audit log.
type GateDecision struct {
	Verdict Verdict
	// By is "rule:<id>", "mode:deny", "mode:auto", "cap:<name>", "kill" — or "" for Ask.
	By string
	// Reason is shown to the model when the call is refused; for Ask it is "",
	// ReasonTainted or ReasonHousehold.
	Reason string
}

// NewEvent is an audit row to append.
type NewEvent struct {
	Seq  int
	Kind string
	Data []byte
}

// CallUpdate moves one journal entry from an expected status to the next.
type CallUpdate struct {
	TurnID    uuid.UUID
	CallID    string
	From, To  CallStatus
	Result    json.RawMessage
	DecidedBy string
	Message   string
	// Inverse, set when a database-local write succeeds, is how an undo reverts it, and At
	// (the application's clock) is when it ran: the undo window starts there.
	Inverse *Inverse
	At      time.Time
}

// Killed reports whether either switch is engaged, and why.
func (c Controls) Killed() (bool, string) {
	switch {
	case c.GlobalKilled:
		return true, "the deployment is stopped: " + c.GlobalReason
	case c.OwnerKilled:
		return true, "Steward is stopped for this owner: " + c.OwnerReason
	}
	return false, ""
}
