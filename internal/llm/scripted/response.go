package scripted

import (
	"encoding/json"

	"github.com/stewardhq/steward/internal/llm"
)

// Text returns a final answer holding s.
func Text(s string) llm.Response {
	return llm.Response{
		Message: llm.Message{Role: llm.RoleModel, Parts: []llm.Part{{Text: s}}},
		Finish:  llm.FinishStop,
	}
}

// Calls returns a response asking for calls, in order, as one batch.
func Calls(calls ...llm.ToolCall) llm.Response {
	msg := llm.Message{Role: llm.RoleModel, Parts: make([]llm.Part, len(calls))}
	for i := range calls {
		c := calls[i]
		msg.Parts[i].ToolCall = &c
	}
	return llm.Response{Message: msg, Finish: llm.FinishToolCalls}
}

// Call returns a tool call. argsJSON is used as is, so a test can send invalid arguments;
// empty means no arguments ({}).
func Call(id, name, argsJSON string) llm.ToolCall {
	if argsJSON == "" {
		argsJSON = "{}"
	}
	return llm.ToolCall{ID: id, Name: name, Args: json.RawMessage(argsJSON)}
}
