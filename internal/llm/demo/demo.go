// Package demo is the offline model Steward runs when no GEMINI_API_KEY is set: a
// deterministic, network-free llm.Model that understands a few fixed phrasings, calls the
// matching built-in tools, and answers their results in plain text. It lets the whole product
// (the loop, the write gate, approvals) be tried without a model account.
package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// Name is the name the demo model reports, so that a session says it is not talking to Gemini.
const Name = "demo (offline, no GEMINI_API_KEY)"

// Model is the offline demo model. The zero value is ready to use (on the wall clock); it is
// stateless and safe for concurrent use.
type Model struct {
	// Now dates the periods of spending questions ("this month"); nil is time.Now.
	Now steward.Clock
}

var _ llm.Model = Model{}

// New returns the demo model.
func New() Model { return Model{} }

// Name returns Name.
func (Model) Name() string { return Name }

// Generate answers the last user message of req. Tool results are summarised in text; a
// recognised request becomes a call to the matching tool when req.Tools declares it and
// req.NoToolCalls does not forbid calls; anything
// else gets a reply listing the phrasings the demo understands. Text is streamed to onDelta
// word by word when it is non-nil. Usage is always zero.
func (m Model) Generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	resp := respond(req, m.Now.Now())
	resp.Model = Name
	if onDelta != nil {
		for _, word := range strings.SplitAfter(resp.Text(), " ") {
			if word == "" {
				continue
			}
			if err := onDelta(word); err != nil {
				return llm.Response{}, fmt.Errorf("demo: stream: %w", err)
			}
		}
	}
	return resp, nil
}

// respond builds the answer to the last user message.
func respond(req llm.Request, now time.Time) llm.Response {
	last, ok := lastUserMessage(req.Messages)
	if !ok {
		return text(helpText)
	}
	if results := toolResults(last); len(results) > 0 {
		if resp, ok := skillStep(req, results, now); ok {
			return resp
		}
		return text(summarise(results, req.Messages))
	}
	if sr, ok := parseSkillRequest(last.Text()); ok && !req.NoToolCalls && declared(req.Tools, "find_skill") {
		return calls(req.Messages, call{"find_skill", args(map[string]any{"query": sr.skill})})
	}
	in, ok := parse(last.Text(), now) // the owner's words only, never the recalled memory block
	if job, answer, isJob := parseJob(last.Text()); isJob {
		if answer != "" {
			return text(answer)
		}
		in, ok = job, true
	}
	if !ok {
		return text(helpText)
	}
	if req.NoToolCalls || !declared(req.Tools, in.tool) {
		return text(fmt.Sprintf("I would use the %s tool for that, but it is not available right now.", in.tool))
	}
	n := countCalls(req.Messages)
	parts := make([]steward.Part, len(in.args))
	for i, args := range in.args {
		parts[i].ToolCall = &steward.ToolCall{ID: fmt.Sprintf("demo_%d", n+i+1), Name: in.tool, Args: args}
	}
	return llm.Response{
		Message: steward.Message{Role: steward.RoleModel, Parts: parts},
		Finish:  llm.FinishToolCalls,
	}
}

func text(s string) llm.Response {
	return llm.Response{
		Message: steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: s}}},
		Finish:  llm.FinishStop,
	}
}

func lastUserMessage(msgs []steward.Message) (steward.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == steward.RoleUser {
			return msgs[i], true
		}
	}
	return steward.Message{}, false
}

func toolResults(msg steward.Message) []steward.ToolResult {
	var out []steward.ToolResult
	for _, p := range msg.Parts {
		if p.ToolResult != nil {
			out = append(out, *p.ToolResult)
		}
	}
	return out
}

func declared(tools []llm.ToolDecl, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// countCalls counts the tool calls already in the conversation, so call ids are deterministic
// and do not repeat within it.
func countCalls(msgs []steward.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				n++
			}
		}
	}
	return n
}
