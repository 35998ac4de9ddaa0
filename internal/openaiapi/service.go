package openaiapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/activity"
	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/steward"
)

// Message is one message of a request, reduced to what Steward reads: its role (user or
// assistant; system and developer messages are dropped, Steward has its own prompt) and its
// text.
type Message struct {
	Role string
	Text string
}

// Chat is one chat completion request.
type Chat struct {
	OwnerID uuid.UUID
	// Messages are the request's user and assistant messages; the last is the user's new one.
	Messages []Message
	// Pin is the conversation named by X-Steward-Conversation-Id, if any.
	Pin *uuid.UUID
}

// Conversations reads what a request is matched against (activity.Service implements it):
// this package is a face and opens no transaction (docs/ARCHITECTURE.md §7).
type Conversations interface {
	// Turns reads one conversation's turns, oldest first; CodeNotFound when the owner has
	// no such conversation.
	Turns(ctx context.Context, ownerID, id uuid.UUID) ([]steward.Turn, error)
	// Histories reads the owner's most recently active conversations whose title keep
	// accepts, each with its turns and messages.
	Histories(ctx context.Context, ownerID uuid.UUID, keep func(title string) bool) ([]activity.History, error)
}

// Service turns chat completion requests into Steward turns: it finds the conversation a
// request continues, starts a turn for the new message, or — when the message is an
// approval reply to a listing of pending calls — confirms that suspended turn.
type Service struct {
	Runner        *agent.Runner
	Conversations Conversations
}

// Run answers one request: the turn it started or resumed, as a View.
func (s *Service) Run(ctx context.Context, c Chat, emit agent.Emit) (steward.View, error) {
	last := c.Messages[len(c.Messages)-1]
	earlier := c.Messages[:len(c.Messages)-1]
	conv, suspended, err := s.resolve(ctx, c.OwnerID, earlier, c.Pin)
	if err != nil {
		return steward.View{}, err
	}
	if reply, ok := parseReply(last.Text); ok && len(suspended) > 0 {
		turn, found := listed(suspended, earlier)
		if !found {
			return steward.View{}, steward.Errorf(steward.CodeConflict,
				"this conversation has pending calls, but no assistant message of the request lists them as they are now; send the conversation's history with your reply")
		}
		decisions, err := reply.decisions(turn.State.Pending)
		if err != nil {
			return steward.View{}, err
		}
		return s.Runner.Confirm(ctx, c.OwnerID, turn.ID, decisions, emit)
	}
	return s.Runner.Start(ctx, agent.Input{OwnerID: c.OwnerID, ConversationID: conv, Message: last.Text, Trigger: steward.TriggerChat}, emit)
}

// resolve finds the conversation a request continues — the pinned one, or the one whose
// transcript its earlier messages contain — and that conversation's suspended turns, newest
// first. No earlier messages and no pin, or no match, is a new conversation (nil).
func (s *Service) resolve(ctx context.Context, owner uuid.UUID, earlier []Message, pin *uuid.UUID) (*uuid.UUID, []steward.Turn, error) {
	if pin != nil {
		turns, err := s.Conversations.Turns(ctx, owner, *pin)
		if err != nil {
			return nil, nil, lookupFailed(err)
		}
		return pin, suspendedOf(turns), nil
	}
	first := firstUser(earlier)
	if first == "" {
		return nil, nil, nil
	}
	// A conversation's title is the start of its first message: a cheap filter.
	words := strings.Join(strings.Fields(first), " ")
	histories, err := s.Conversations.Histories(ctx, owner, func(title string) bool {
		return strings.HasPrefix(words, strings.TrimSuffix(title, "…"))
	})
	if err != nil {
		return nil, nil, lookupFailed(err)
	}
	var conv *uuid.UUID
	var suspended []steward.Turn
	best := 0
	for _, h := range histories {
		tr := transcript(h.Turns, h.Messages)
		if len(tr) > best && contains(earlier, tr) {
			id := h.ID
			best, conv, suspended = len(tr), &id, suspendedOf(h.Turns)
		}
	}
	return conv, suspended, nil
}

// lookupFailed words an error of the conversation lookup; "conversation not found" stays as
// it is.
func lookupFailed(err error) error {
	if steward.ErrorCode(err) == steward.CodeNotFound {
		return steward.Errorf(steward.CodeNotFound, "conversation not found")
	}
	return fmt.Errorf("find conversation: %w", err)
}

// transcript is what a client of this API saw of a conversation, turn by turn: the owner's
// message and, for a completed turn, its answer. A turn that failed before it was stored
// has no message to match and is left out.
func transcript(turns []steward.Turn, msgs []steward.StoredMessage) []Message {
	asked := map[uuid.UUID]string{}
	for _, m := range msgs {
		if _, ok := asked[m.TurnID]; !ok && m.Message.Role == steward.RoleUser {
			asked[m.TurnID] = strings.TrimSpace(m.Message.Text())
		}
	}
	var out []Message
	for _, t := range turns {
		q, ok := asked[t.ID]
		if !ok && t.State != nil && len(t.State.Messages) > 0 {
			q, ok = strings.TrimSpace(t.State.Messages[0].Text()), true
		}
		if !ok || q == "" {
			continue
		}
		out = append(out, Message{Role: "user", Text: q})
		if t.Status == steward.StatusCompleted && strings.TrimSpace(t.Answer) != "" {
			out = append(out, Message{Role: "assistant", Text: strings.TrimSpace(t.Answer)})
		}
	}
	return out
}

// contains reports whether the transcript tr is, in order, within a request's earlier
// messages, starting at their first user message. A user message matches by its text; an
// assistant message matches one that ends with it (a streaming client may have received
// text of the turn's earlier steps before the answer). Messages the transcript does not hold
// — listings of pending calls, approval replies — are skipped.
func contains(earlier []Message, tr []Message) bool {
	if len(tr) == 0 || tr[0].Role != "user" || tr[0].Text != firstUser(earlier) {
		return false
	}
	i := 0
	for _, m := range earlier {
		if i == len(tr) {
			break
		}
		text := strings.TrimSpace(m.Text)
		if m.Role == tr[i].Role && (text == tr[i].Text || m.Role == "assistant" && strings.HasSuffix(text, tr[i].Text)) {
			i++
		}
	}
	return i == len(tr)
}

// firstUser is the text of the first user message.
func firstUser(msgs []Message) string {
	for _, m := range msgs {
		if m.Role == "user" {
			return strings.TrimSpace(m.Text)
		}
	}
	return ""
}

// suspendedOf keeps the suspended turns with pending calls, newest first.
func suspendedOf(turns []steward.Turn) []steward.Turn {
	var out []steward.Turn
	for i := len(turns) - 1; i >= 0; i-- {
		if t := turns[i]; t.Status == steward.StatusSuspended && t.State != nil && len(t.State.Pending) > 0 {
			out = append(out, t)
		}
	}
	return out
}

// listed finds the suspended turn an approval reply answers: the one listed by the latest
// assistant message that lists a turn still waiting. A listing names the turn and each
// call's tool, arguments and args hash, so a reply decides exactly the calls it was shown.
func listed(suspended []steward.Turn, earlier []Message) (steward.Turn, bool) {
	for i := len(earlier) - 1; i >= 0; i-- {
		if earlier[i].Role != "assistant" {
			continue
		}
		for _, t := range suspended {
			if strings.Contains(earlier[i].Text, Listing(t.ID, t.State.Pending)) {
				return t, true
			}
		}
	}
	return steward.Turn{}, false
}

// Listing is the assistant text of a suspended turn: each pending write with its number,
// tool, arguments and short args hash, and how to answer.
func Listing(turnID uuid.UUID, pending []steward.PendingCall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Steward is waiting for your approval before it runs %d write(s):\n\n", len(pending))
	for i, p := range pending {
		fmt.Fprintf(&b, "%d. %s %s (args %s)\n", i+1, p.Tool, compact(p.Args), shortHash(p.ArgsHash))
	}
	b.WriteString("\nReply \"approve\" to run all of them, \"approve 2\" to run only that one, " +
		"\"deny 1 <reason>\" to refuse one with a reason, or \"deny all\". " +
		"Only the calls you approve run; the others are denied. Any other message leaves them pending.\n")
	fmt.Fprintf(&b, "(Steward turn %s)", turnID)
	return b.String()
}

// compact renders arguments as one line of JSON.
func compact(args json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil || b.Len() == 0 {
		return string(args)
	}
	return b.String()
}

// shortHash is the first 12 characters of an args hash (after any "sha256:" prefix).
func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
