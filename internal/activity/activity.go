// Package activity is what the owner sees of their history: conversations with their
// messages and turns, the approvals inbox, the activity feed, a turn's events and the
// notifications (docs/ARCHITECTURE.md §7). It only reads; internal/httpapi serves it.
package activity

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
)

// Limits of the reads; paging comes when someone needs it.
const (
	MaxConversations     = 100
	MaxConversationTurns = 500
	MaxHistories         = 50  // the most recently active conversations a Histories read considers
	MaxApprovals         = 100 // the newest suspended turns first
	MaxFeed              = 100
	MaxDeliveries        = 50
	MaxRuns              = 100 // job and webhook runs on the activity page, newest first
	MaxNotifications     = 100
)

// Service reads an owner's history. It is safe for concurrent use.
type Service struct {
	Store *store.Store
	// Now is the clock that decides which approvals have expired; nil means time.Now.
	Now steward.Clock
}

// Conversations lists the owner's conversations, most recently active first.
func (s *Service) Conversations(ctx context.Context, ownerID uuid.UUID) ([]steward.Conversation, error) {
	var convs []steward.Conversation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		convs, err = tx.Conversations.List(ctx, MaxConversations)
		return err
	})
	if convs == nil {
		convs = []steward.Conversation{}
	}
	return convs, err
}

// Conversation is a conversation with its history.
type Conversation struct {
	steward.Conversation
	Messages []Message `json:"messages"`
	// Turns are the conversation's turns, oldest first.
	Turns []steward.View `json:"turns"`
}

// Message is a stored message rendered simply: role user (the owner), assistant (the model)
// or tool (results sent back to the model); text without the model's thoughts or recalled
// context; tool calls and results without provider metadata.
type Message struct {
	Seq         int          `json:"seq"`
	TurnID      uuid.UUID    `json:"turn_id"`
	Role        string       `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
}

// ToolCall is a tool call as clients see it (history, and tool_call stream events).
type ToolCall struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
}

// ToolResult is a tool result as clients see it (history, and tool_result stream events).
type ToolResult struct {
	CallID  string          `json:"call_id"`
	Tool    string          `json:"tool"`
	Output  json.RawMessage `json:"output"`
	IsError bool            `json:"is_error,omitempty"`
}

// CallOf is the client's view of a tool call.
func CallOf(c steward.ToolCall) ToolCall {
	return ToolCall{CallID: c.ID, Tool: c.Name, Args: orEmpty(c.Args)}
}

// ResultOf is the client's view of a tool result.
func ResultOf(r steward.ToolResult) ToolResult {
	return ToolResult{CallID: r.CallID, Tool: r.Name, Output: orEmpty(r.Output), IsError: r.IsError}
}

// Conversation reads one conversation with its messages and turns; another owner's or an
// unknown id is "conversation not found".
func (s *Service) Conversation(ctx context.Context, ownerID, id uuid.UUID) (Conversation, error) {
	var out Conversation
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		conv, msgs, turns, err := readConversation(ctx, tx, id)
		if err != nil {
			return err
		}
		out = Conversation{Conversation: conv, Messages: make([]Message, 0, len(msgs)), Turns: make([]steward.View, 0, len(turns))}
		for _, m := range msgs {
			out.Messages = append(out.Messages, render(m))
		}
		for _, t := range turns {
			out.Turns = append(out.Turns, steward.ViewOf(t))
		}
		return nil
	})
	return out, conversationNotFound(err)
}

// readConversation reads a conversation, its messages and its turns (at most
// MaxConversationTurns) in tx.
func readConversation(ctx context.Context, tx *store.Tx, id uuid.UUID) (steward.Conversation, []steward.StoredMessage, []steward.Turn, error) {
	conv, err := tx.Conversations.Get(ctx, id)
	if err != nil {
		return conv, nil, nil, err
	}
	msgs, err := tx.Conversations.Messages(ctx, id)
	if err != nil {
		return conv, nil, nil, err
	}
	turns, err := tx.Turns.InConversation(ctx, id, MaxConversationTurns)
	return conv, msgs, turns, err
}

// History is a conversation's record as the OpenAI-compatible face (internal/openaiapi)
// matches a request's messages against it: its turns (at most MaxConversationTurns, oldest
// first) and its stored messages.
type History struct {
	ID       uuid.UUID
	Turns    []steward.Turn
	Messages []steward.StoredMessage
}

// Turns reads one conversation's turns (at most MaxConversationTurns, oldest first); another
// owner's or an unknown id is "conversation not found".
func (s *Service) Turns(ctx context.Context, ownerID, id uuid.UUID) ([]steward.Turn, error) {
	var turns []steward.Turn
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Conversations.Get(ctx, id); err != nil {
			return err
		}
		var err error
		turns, err = tx.Turns.InConversation(ctx, id, MaxConversationTurns)
		return err
	})
	return turns, conversationNotFound(err)
}

// Histories reads, in one owner transaction, the histories of the owner's most recently
// active conversations (at most MaxHistories) whose title keep accepts; keep is a cheap
// filter that spares reading the others.
func (s *Service) Histories(ctx context.Context, ownerID uuid.UUID, keep func(title string) bool) ([]History, error) {
	var out []History
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		convs, err := tx.Conversations.List(ctx, MaxHistories)
		if err != nil {
			return err
		}
		for _, cv := range convs {
			if !keep(cv.Title) {
				continue
			}
			h := History{ID: cv.ID}
			if h.Turns, err = tx.Turns.InConversation(ctx, cv.ID, MaxConversationTurns); err != nil {
				return err
			}
			if h.Messages, err = tx.Conversations.Messages(ctx, cv.ID); err != nil {
				return err
			}
			out = append(out, h)
		}
		return nil
	})
	return out, err
}

// conversationNotFound words a not_found error of a conversation's read as the client sees it.
func conversationNotFound(err error) error {
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return steward.Errorf(steward.CodeNotFound, "conversation not found")
	}
	return err
}

// render turns a stored provider-neutral message into its client view.
func render(m steward.StoredMessage) Message {
	v := Message{Seq: m.Seq, TurnID: m.TurnID, CreatedAt: m.CreatedAt, Role: "user"}
	if m.Message.Role == steward.RoleModel {
		v.Role = "assistant"
	}
	for _, p := range m.Message.Parts {
		switch {
		case p.ToolCall != nil:
			v.ToolCalls = append(v.ToolCalls, CallOf(*p.ToolCall))
		case p.ToolResult != nil:
			v.Role = "tool"
			v.ToolResults = append(v.ToolResults, ResultOf(*p.ToolResult))
		}
	}
	v.Text = m.Message.Text() // what the author wrote: no thoughts, no context parts
	return v
}

// Approval is one suspended turn in the owner's inbox.
type Approval struct {
	TurnID         uuid.UUID             `json:"turn_id"`
	ConversationID uuid.UUID             `json:"conversation_id"`
	Trigger        steward.Trigger       `json:"trigger"`
	CreatedAt      time.Time             `json:"created_at"`
	ExpiresAt      *time.Time            `json:"expires_at"`
	Pending        []steward.PendingCall `json:"pending"`
}

// Approvals lists the owner's suspended turns that can still be confirmed, newest first
// (at most MaxApprovals). An expired turn waiting for the sweep is left out: a confirm would
// be refused.
func (s *Service) Approvals(ctx context.Context, ownerID uuid.UUID) ([]Approval, error) {
	now := s.Now.Now()
	out := []Approval{}
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		turns, err := tx.Turns.List(ctx, steward.StatusSuspended, MaxApprovals)
		for _, t := range turns {
			if t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) {
				continue
			}
			v := steward.ViewOf(t)
			if v.Pending == nil {
				v.Pending = []steward.PendingCall{}
			}
			out = append(out, Approval{TurnID: v.TurnID, ConversationID: v.ConversationID, Trigger: v.Trigger,
				CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt, Pending: v.Pending})
		}
		return err
	})
	return out, err
}

// PendingCount is what the owner's approvals badge shows: the writes waiting for their
// decision (the pending calls of their suspended turns the inbox lists) and those turns, in
// one indexed read.
type PendingCount struct {
	Writes int `json:"writes"`
	Turns  int `json:"turns"`
}

// Pending counts the owner's writes waiting for a decision: what Approvals lists, counted
// in one indexed read, with no turn's state decoded.
func (s *Service) Pending(ctx context.Context, ownerID uuid.UUID) (PendingCount, error) {
	var c PendingCount
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		c.Writes, c.Turns, err = tx.Turns.PendingWrites(ctx, s.Now.Now())
		return err
	})
	return c, err
}

// Feed is the owner's turns, newest first (at most MaxFeed), with lifecycle and trigger.
func (s *Service) Feed(ctx context.Context, ownerID uuid.UUID) ([]steward.View, error) {
	var turns []steward.Turn
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		turns, err = tx.Turns.List(ctx, "", MaxFeed)
		return err
	})
	views := make([]steward.View, len(turns))
	for i, t := range turns {
		views[i] = steward.ViewOf(t)
	}
	return views, err
}

// Runs is the owner's autonomous runs, newest first (at most MaxRuns): scheduled and manual
// job runs and webhook runs (Trigger "webhook", Job "webhook:<source>"), each with its
// status and, once it started one, its turn.
func (s *Service) Runs(ctx context.Context, ownerID uuid.UUID) ([]store.JobRun, error) {
	var runs []store.JobRun
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		runs, err = tx.Runs.List(ctx, "", MaxRuns)
		return err
	})
	if runs == nil {
		runs = []store.JobRun{}
	}
	return runs, err
}

// TurnEvents is one turn's trace, in order; another owner's or an unknown turn is not found.
func (s *Service) TurnEvents(ctx context.Context, ownerID, turnID uuid.UUID) ([]steward.Event, error) {
	var events []steward.Event
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		if _, err := tx.Turns.Get(ctx, turnID); err != nil {
			return err
		}
		var err error
		events, err = tx.Journal.TurnEvents(ctx, turnID)
		return err
	})
	if events == nil {
		events = []steward.Event{}
	}
	return events, err
}

// Story is one turn told in full: the turn, its tool calls with the gate's decisions and who
// made them, and its events in order (the web app's turn page).
type Story struct {
	Turn   steward.View
	Calls  []steward.CallRecord
	Events []steward.Event
	// Question is what the owner asked (the turn's first message); Decisions how each call a
	// person decided was decided.
	Question  string
	Decisions map[string]Decision
}

// Story reads one turn's story; another owner's or an unknown turn is not found.
func (s *Service) Story(ctx context.Context, ownerID, turnID uuid.UUID) (Story, error) {
	var st Story
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		t, err := tx.Turns.Get(ctx, turnID)
		if err != nil {
			return err
		}
		st.Turn = steward.ViewOf(t)
		if st.Calls, err = tx.Journal.Calls(ctx, turnID); err != nil {
			return err
		}
		if st.Events, err = tx.Journal.TurnEvents(ctx, turnID); err != nil {
			return err
		}
		st.Decisions = Decisions(st.Calls, st.Events)
		var stored []steward.StoredMessage
		if t.State == nil {
			if stored, err = tx.Conversations.Messages(ctx, t.ConversationID); err != nil {
				return err
			}
		}
		st.Question = question(t, stored)
		return nil
	})
	return st, err
}

// Deliveries is the owner's latest notification delivery attempts, newest first (at most
// MaxDeliveries, among the latest 500 audit rows): the events notification.delivered,
// notification.retry and notification.failed the deliverer and channel tests append.
func (s *Service) Deliveries(ctx context.Context, ownerID uuid.UUID) ([]steward.Event, error) {
	out := []steward.Event{}
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		events, err := tx.Journal.RecentEvents(ctx, 500)
		for _, e := range events {
			if strings.HasPrefix(e.Kind, "notification.") && len(out) < MaxDeliveries {
				out = append(out, e)
			}
		}
		return err
	})
	return out, err
}

// Notifications lists the owner's notifications with their delivery state, newest first.
func (s *Service) Notifications(ctx context.Context, ownerID uuid.UUID) ([]store.Notification, error) {
	var notes []store.Notification
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var err error
		notes, err = tx.Deliveries.Notifications(ctx, MaxNotifications)
		return err
	})
	if notes == nil {
		notes = []store.Notification{}
	}
	return notes, err
}

// orEmpty makes sure raw JSON is a value: nil becomes {}.
func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage(`{}`)
	}
	return b
}

// ChatTurn is one turn of a conversation as the web app's chat shows it: the turn, its
// messages (the stored ones of a completed turn; of any other, those its saved state holds,
// starting with the owner's message) and the journal of its tool calls by call id.
type ChatTurn struct {
	Turn     steward.View
	Messages []Message
	Calls    map[string]steward.CallRecord
	// Decisions is how each call a person decided was decided, by call id.
	Decisions map[string]Decision
}

// Chat reads a conversation for the chat page: its turns oldest first, each with its
// messages and calls, in one transaction. Another owner's or an unknown id is "conversation
// not found".
func (s *Service) Chat(ctx context.Context, ownerID, id uuid.UUID) (steward.Conversation, []ChatTurn, error) {
	var conv steward.Conversation
	var out []ChatTurn
	err := s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		var msgs []steward.StoredMessage
		var turns []steward.Turn
		var err error
		if conv, msgs, turns, err = readConversation(ctx, tx, id); err != nil {
			return err
		}
		byTurn := map[uuid.UUID][]Message{}
		for _, m := range msgs {
			byTurn[m.TurnID] = append(byTurn[m.TurnID], render(m))
		}
		for _, t := range turns {
			ct := ChatTurn{Turn: steward.ViewOf(t), Messages: byTurn[t.ID]}
			if ct.Messages == nil && t.State != nil {
				for i, m := range t.State.Messages {
					ct.Messages = append(ct.Messages, render(steward.StoredMessage{Seq: i, TurnID: t.ID, Message: m, CreatedAt: t.CreatedAt}))
				}
			}
			if calls(ct.Messages) {
				recs, err := tx.Journal.Calls(ctx, t.ID)
				if err != nil {
					return err
				}
				ct.Calls = make(map[string]steward.CallRecord, len(recs))
				for _, c := range recs {
					ct.Calls[c.CallID] = c
				}
				if decided(recs) {
					// When and by whom: the turn's events (read only for a turn a person decided).
					events, err := tx.Journal.TurnEvents(ctx, t.ID)
					if err != nil {
						return err
					}
					ct.Decisions = Decisions(recs, events)
				}
			}
			out = append(out, ct)
		}
		return nil
	})
	return conv, out, conversationNotFound(err)
}

// calls reports whether any of msgs calls a tool.
func calls(msgs []Message) bool {
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// ConversationPage is one page of the owner's conversations, most recently active first:
// page 0 is the newest size; more says whether an older page exists.
func (s *Service) ConversationPage(ctx context.Context, ownerID uuid.UUID, page, size int) (convs []steward.Conversation, more bool, err error) {
	page, size = max(page, 0), max(size, 1)
	err = s.Store.WithOwner(ctx, ownerID, func(tx *store.Tx) error {
		// The newest (page+1)·size+1 rows, the page sliced from them: no offset query, and an
		// owner's conversations are hundreds, not millions.
		all, err := tx.Conversations.List(ctx, (page+1)*size+1)
		if err != nil {
			return err
		}
		from := min(page*size, len(all))
		to := min(from+size, len(all))
		convs, more = all[from:to], len(all) > to
		return nil
	})
	return convs, more, err
}
