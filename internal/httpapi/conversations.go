package httpapi

import (
	"net/http"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/store"
)

// Limits of the history reads; paging comes when someone needs it.
const (
	maxConversations     = 100
	maxConversationTurns = 500
)

// conversations lists the owner's conversations, most recently active first: GET
// /v1/conversations → {"conversations":[{"id","title","created_at","updated_at"}]}.
func (a *api) conversations(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var convs []steward.Conversation
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		var err error
		convs, err = tx.Conversations.List(ctx, maxConversations)
		return err
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	if convs == nil {
		convs = []steward.Conversation{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": convs})
}

// conversationView is a conversation with its history, as GET /v1/conversations/{id} shows it.
type conversationView struct {
	steward.Conversation
	Messages []messageView `json:"messages"`
	// Turns are the conversation's turns, oldest first, as TurnViews.
	Turns []steward.View `json:"turns"`
}

// messageView renders a stored message simply: role user (the owner), assistant (the model)
// or tool (results sent back to the model); text without the model's thoughts; tool calls
// and results without provider metadata.
type messageView struct {
	Seq         int              `json:"seq"`
	TurnID      uuid.UUID        `json:"turn_id"`
	Role        string           `json:"role"`
	Text        string           `json:"text,omitempty"`
	ToolCalls   []toolCallView   `json:"tool_calls,omitempty"`
	ToolResults []toolResultView `json:"tool_results,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
}

// conversation reads one conversation with its messages and turns: GET
// /v1/conversations/{id}.
func (a *api) conversation(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "conversation")
	if !ok {
		return
	}
	ctx := r.Context()
	var out conversationView
	err := a.d.Store.WithOwner(ctx, principal(ctx).OwnerID, func(tx *store.Tx) error {
		conv, err := tx.Conversations.Get(ctx, id)
		if err != nil {
			return err
		}
		msgs, err := tx.Conversations.Messages(ctx, id)
		if err != nil {
			return err
		}
		turns, err := tx.Turns.InConversation(ctx, id, maxConversationTurns)
		if err != nil {
			return err
		}
		out = conversationView{Conversation: conv, Messages: make([]messageView, 0, len(msgs)), Turns: make([]steward.View, 0, len(turns))}
		for _, m := range msgs {
			out.Messages = append(out.Messages, renderMessage(m))
		}
		for _, t := range turns {
			out.Turns = append(out.Turns, steward.ViewOf(t))
		}
		return nil
	})
	if err != nil {
		if steward.ErrorCode(err) == steward.CodeNotFound {
			err = steward.Errorf(steward.CodeNotFound, "conversation not found")
		}
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// renderMessage turns a stored provider-neutral message into its client view.
func renderMessage(m steward.StoredMessage) messageView {
	v := messageView{Seq: m.Seq, TurnID: m.TurnID, CreatedAt: m.CreatedAt, Role: "user"}
	if m.Message.Role == steward.RoleModel {
		v.Role = "assistant"
	}
	for _, p := range m.Message.Parts {
		switch {
		case p.ToolCall != nil:
			v.ToolCalls = append(v.ToolCalls, toolCallView{CallID: p.ToolCall.ID, Tool: p.ToolCall.Name, Args: orEmpty(p.ToolCall.Args)})
		case p.ToolResult != nil:
			v.Role = "tool"
			v.ToolResults = append(v.ToolResults, toolResultView{CallID: p.ToolResult.CallID, Tool: p.ToolResult.Name,
				Output: orEmpty(p.ToolResult.Output), IsError: p.ToolResult.IsError})
		}
	}
	v.Text = m.Message.Text() // what the author wrote: no thoughts, no context parts
	return v
}
