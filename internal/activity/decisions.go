package activity

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Decision is how a write that waited for a person was decided, as the web app words it
// ("Approved by you · 10:42", "Denied by bob"): from the call journal and the turn's events.
type Decision struct {
	Approved bool
	// By is who decided: "you", a household member's name, or several ("you and bob").
	By string
	// At is when (the gate_decision event's time); zero when it is not known.
	At time.Time
	// Message is what the person said with the decision, if anything.
	Message string
}

// Decisions is how each call of a turn that a person decided was decided, by call id: a call
// journaled as decided by a human (the owner's confirm in any face: the web app, a one-tap
// link, Telegram, the API), named by the household's votes when the turn had some.
func Decisions(calls []steward.CallRecord, events []steward.Event) map[string]Decision {
	out := map[string]Decision{}
	for _, c := range calls {
		if c.DecidedBy == "human" {
			out[c.CallID] = Decision{Approved: c.Status != steward.CallDenied, By: "you", Message: c.Message}
		}
	}
	if len(out) == 0 {
		return out
	}
	for _, e := range events {
		switch e.Kind {
		case "gate_decision":
			var g struct {
				CallID string `json:"call_id"`
				By     string `json:"by"`
			}
			if json.Unmarshal(e.Data, &g) == nil && g.By == "human" {
				if d, ok := out[g.CallID]; ok {
					d.At = e.CreatedAt
					out[g.CallID] = d
				}
			}
		case "household_approval":
			var h struct {
				Votes []struct {
					CallID string `json:"call_id"`
					By     string `json:"by"`
					Vote   string `json:"vote"`
				} `json:"votes"`
			}
			if json.Unmarshal(e.Data, &h) != nil {
				continue
			}
			who := map[string][]string{}
			for _, v := range h.Votes {
				d, ok := out[v.CallID]
				name := v.By
				if name == "owner" {
					name = "you"
				}
				// The approvals name everyone who approved; a refusal names who refused.
				if ok && ((d.Approved && v.Vote == steward.VoteApproved) || (!d.Approved && v.Vote == steward.VoteDenied)) && !slices.Contains(who[v.CallID], name) {
					who[v.CallID] = append(who[v.CallID], name)
				}
			}
			for id, names := range who {
				d := out[id]
				d.By = andList(names)
				out[id] = d
			}
		}
	}
	return out
}

// andList joins names as "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// decided reports whether a person decided any of calls.
func decided(calls []steward.CallRecord) bool {
	return slices.ContainsFunc(calls, func(c steward.CallRecord) bool { return c.DecidedBy == "human" })
}

// question is what the owner asked in a turn: the text of its first user message (its saved
// state's while it has one, else the conversation's stored messages of the turn).
func question(t steward.Turn, stored []steward.StoredMessage) string {
	if t.State != nil {
		for _, m := range t.State.Messages {
			if s := m.Text(); m.Role != steward.RoleModel && s != "" {
				return s
			}
		}
	}
	for _, m := range stored {
		if m.TurnID == t.ID && m.Message.Role != steward.RoleModel {
			if s := m.Message.Text(); s != "" {
				return s
			}
		}
	}
	return ""
}

// Decided reads how each call of a turn that a person decided was decided (the web app's
// watch over a card that may be decided elsewhere: another tab, a link, Telegram).
func (s *Service) Decided(ctx context.Context, ownerID, turnID uuid.UUID) (map[string]Decision, error) {
	var out map[string]Decision
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		calls, err := tx.Journal.Calls(ctx, turnID)
		if err != nil || !decided(calls) {
			out = map[string]Decision{}
			return err
		}
		events, err := tx.Journal.TurnEvents(ctx, turnID)
		out = Decisions(calls, events)
		return err
	})
	return out, err
}
