package scripted

import (
	"encoding/json"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// Text returns a final answer holding s.
func Text(s string) llm.Response {
	return llm.Response{
		Message: steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{Text: s}}},
		Finish:  llm.FinishStop,
	}
}

// Calls returns a response asking for calls, in order, as one batch.
func Calls(calls ...steward.ToolCall) llm.Response {
	msg := steward.Message{Role: steward.RoleModel, Parts: make([]steward.Part, len(calls))}
	for i := range calls {
		c := calls[i]
		msg.Parts[i].ToolCall = &c
	}
	return llm.Response{Message: msg, Finish: llm.FinishToolCalls}
}

// Call returns a tool call. argsJSON is used as is, so a test can send invalid arguments;
// empty means no arguments ({}).
func Call(id, name, argsJSON string) steward.ToolCall {
	if argsJSON == "" {
		argsJSON = "{}"
	}
	return steward.ToolCall{ID: id, Name: name, Args: json.RawMessage(argsJSON)}
}
