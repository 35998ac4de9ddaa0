package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// toParams builds the chat completion request: the system prompt as the first message, the
// conversation, the tools and the tool choice, the output limit and the reasoning effort.
func toParams(req llm.Request, model string) (openai.ChatCompletionRequest, error) {
	if req.ForceTool != "" && req.NoToolCalls {
		return openai.ChatCompletionRequest{}, fmt.Errorf("request both forces tool %s and forbids tool calls", req.ForceTool)
	}
	p := openai.ChatCompletionRequest{Model: model}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	for i, msg := range req.Messages {
		msgs, err := toMessages(msg)
		if err != nil {
			return p, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, msgs...)
	}
	for _, t := range req.Tools {
		// The client always sends "parameters"; a tool without any declares an empty object,
		// which the API documents as the same as leaving them out.
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			schema = nil
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("tool %s parameters: %w", t.Name, err)
			}
		}
		p.Tools = append(p.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if len(req.Tools) > 0 {
		switch {
		case req.ForceTool != "":
			p.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: req.ForceTool}}
		case req.NoToolCalls:
			// The tools stay declared, so the request keeps the prefix of the calls before it.
			p.ToolChoice = "none"
		}
	}
	if req.MaxOutputTokens > 0 {
		p.MaxCompletionTokens = req.MaxOutputTokens
	}
	if req.Thinking == llm.ThinkingLow && reasons(model) {
		p.ReasoningEffort = openai.ReasoningEffortLow
	}
	return p, nil
}

// reasons reports whether model is one of OpenAI's reasoning families (gpt-5…, o1, o3, o4…),
// which take reasoning_effort; other models (and most local ones) answer 400 to it. A name
// behind a router prefix ("openai/gpt-5-mini") counts by its last segment.
func reasons(model string) bool {
	name := model[strings.LastIndexByte(model, '/')+1:]
	if strings.HasPrefix(name, "gpt-5") {
		return true
	}
	return len(name) >= 2 && name[0] == 'o' && name[1] >= '1' && name[1] <= '9'
}

// toMessages converts one steward message. A user message becomes role "tool" messages for
// its tool results (in order) and a user message for its text; a model message becomes one
// assistant message with its answer text and tool calls. Thoughts and provider metadata are
// dropped.
func toMessages(msg steward.Message) ([]openai.ChatCompletionMessage, error) {
	var out []openai.ChatCompletionMessage
	var text []string
	switch msg.Role {
	case steward.RoleUser:
		for _, p := range msg.Parts {
			switch {
			case p.ToolResult != nil:
				content, err := resultContent(*p.ToolResult)
				if err != nil {
					return nil, err
				}
				out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: content, ToolCallID: p.ToolResult.CallID})
			case p.Text != "" && !p.Thought:
				text = append(text, p.Text)
			}
		}
		if len(text) > 0 {
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: strings.Join(text, "\n\n")})
		}
	case steward.RoleModel:
		a := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
		for _, p := range msg.Parts {
			switch {
			case p.ToolCall != nil:
				args := string(bytes.TrimSpace(p.ToolCall.Args))
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ToolCall{ID: p.ToolCall.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: p.ToolCall.Name, Arguments: args}})
			case p.Text != "" && !p.Thought:
				text = append(text, p.Text)
			}
		}
		if len(text) > 0 {
			a.Content = strings.Join(text, "")
		}
		if len(text) > 0 || len(a.ToolCalls) > 0 {
			out = append(out, a)
		}
	default:
		return nil, fmt.Errorf("unknown role %q", msg.Role)
	}
	return out, nil
}

// resultContent is a tool result as the content of a tool message: its JSON output, or
// {"error": output} for a failed call (the same shape Gemini is sent).
func resultContent(tr steward.ToolResult) (string, error) {
	out := bytes.TrimSpace(tr.Output)
	if len(out) == 0 {
		out = []byte("null")
	}
	if !json.Valid(out) {
		return "", fmt.Errorf("tool result %s (%s) output is not JSON", tr.CallID, tr.Name)
	}
	key := "output"
	if tr.IsError {
		key = "error"
	}
	b, err := json.Marshal(map[string]json.RawMessage{key: out})
	return string(b), err
}

// toResponse converts the first choice of a completion. Usage: prompt tokens are the input
// (cached tokens are a part of them), completion tokens the output (reasoning tokens are a
// part of them, billed as output).
func toResponse(c *openai.ChatCompletionResponse, model string) (llm.Response, error) {
	resp := llm.Response{
		Message: steward.Message{Role: steward.RoleModel},
		Model:   model,
		Usage: steward.Usage{
			InputTokens:  int64(c.Usage.PromptTokens),
			OutputTokens: int64(c.Usage.CompletionTokens),
		},
	}
	if d := c.Usage.PromptTokensDetails; d != nil {
		resp.Usage.CachedTokens = int64(d.CachedTokens)
	}
	if len(c.Choices) == 0 {
		return llm.Response{}, errors.New("response has no choice")
	}
	choice := c.Choices[0]
	msg := choice.Message
	if msg.Content != "" {
		resp.Message.Parts = append(resp.Message.Parts, steward.Part{Text: msg.Content})
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom tools are never declared
		}
		args := json.RawMessage(strings.TrimSpace(tc.Function.Arguments))
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			return llm.Response{}, fmt.Errorf("tool call %s (%s) arguments are not JSON", tc.ID, tc.Function.Name)
		}
		call := &steward.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args}
		if call.ID == "" {
			call.ID, call.MintedID = mintID(), true
		}
		resp.Message.Parts = append(resp.Message.Parts, steward.Part{ToolCall: call})
	}
	resp.FinishDetail = string(choice.FinishReason)
	switch {
	case msg.Refusal != "":
		resp.Finish = llm.FinishRefused
	case choice.FinishReason == openai.FinishReasonLength:
		resp.Finish = llm.FinishMaxTokens
	case choice.FinishReason == openai.FinishReasonContentFilter:
		resp.Finish = llm.FinishBlocked
	case len(resp.ToolCalls()) > 0:
		// Some compatible servers (Ollama) say "stop" for a message of tool calls.
		resp.Finish = llm.FinishToolCalls
	case choice.FinishReason == openai.FinishReasonStop || choice.FinishReason == "":
		resp.Finish = llm.FinishStop
	default:
		resp.Finish = llm.FinishRefused
	}
	return resp, nil
}

// mintID returns a fresh id for a tool call a server sent without one (some local servers
// do); tool results name it back, since chat completions matches them by id.
func mintID() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails: crypto/rand aborts the program instead
	return "call_" + hex.EncodeToString(b)
}
