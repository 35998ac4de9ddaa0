package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/steward"
)

// Read runs one read tool for a client of a face that calls tools directly (MCP), outside
// any transaction, with data that refuses writes, after the kill switch is checked. It makes
// no turn, so nothing is journaled (the face's access log records the request). A tool that
// refuses its arguments answers with an error result (isError), not an error.
func (r *Runner) Read(ctx context.Context, ownerID uuid.UUID, name string, args json.RawMessage) (steward.ToolResult, error) {
	tool, ok := r.Tools.Get(name)
	switch {
	case !ok:
		return steward.ToolResult{}, steward.Errorf(steward.CodeNotFound, "unknown tool %q", name)
	case tool.Kind != steward.KindRead:
		return steward.ToolResult{}, steward.Errorf(steward.CodeInvalid, "%s is a write: propose it for the owner's approval", name)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	c := steward.ToolCall{ID: "read", Name: name, Args: args}
	if err := tool.Validate(args); err != nil {
		return errorResult(c, err.Error()), nil
	}
	// No turn: the run's state only collects the tool_result event, which no turn keeps.
	x := &run{turn: steward.Turn{OwnerID: ownerID}, st: &steward.State{}}
	if err := r.inOwner(ctx, x, func(tx Tx) error { return r.check(ctx, tx, x) }); err != nil {
		return steward.ToolResult{}, err
	}
	return r.runTool(ctx, readData{r: r, x: x}, readLedger{r: r, x: x}, x, c)
}

// Propose turns a write a client asked for (MCP) into a suspended turn, trigger mcp: the call
// goes through the gate like a model's, but as an untrusted turn's, so no standing rule or
// auto mode runs it — it waits for the owner, or is refused (kill switch, deny mode, caps).
// Once decided, the turn completes with the call's outcome; no model is called (State.Proposed).
func (r *Runner) Propose(ctx context.Context, ownerID uuid.UUID, name string, args json.RawMessage) (steward.View, error) {
	tool, ok := r.Tools.Get(name)
	switch {
	case !ok:
		return steward.View{}, steward.Errorf(steward.CodeNotFound, "unknown tool %q", name)
	case tool.Kind != steward.KindWrite:
		return steward.View{}, steward.Errorf(steward.CodeInvalid, "%s is a read: run it directly", name)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := tool.Validate(args); err != nil {
		return steward.View{}, steward.Errorf(steward.CodeInvalid, "%s", err.Error())
	}
	msg := fmt.Sprintf("An MCP client asked to run %s with %s.", name, args)
	x := &run{st: &steward.State{SchemaVersion: steward.StateSchemaVersion, Proposed: true,
		Messages: []steward.Message{{Role: steward.RoleUser, Parts: []steward.Part{{Text: msg}}}}}}
	x.turn.OwnerID = ownerID
	if err := r.open(ctx, x, Input{OwnerID: ownerID, Message: msg, Trigger: steward.TriggerMCP}, false, nil); err != nil {
		return steward.View{}, err
	}
	call := steward.ToolCall{ID: "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16], Name: name, Args: args, MintedID: true}
	x.st.Messages = append(x.st.Messages, steward.Message{Role: steward.RoleModel, Parts: []steward.Part{{ToolCall: &call}}})
	suspended, err := r.batch(ctx, x, []steward.ToolCall{call}, nil)
	switch {
	case err != nil:
		return r.stop(ctx, x, err)
	case suspended:
		return r.suspend(ctx, x)
	}
	return r.finishProposed(ctx, x)
}

// finishProposed completes a proposed turn with its calls' outcome. The conversation keeps
// the request and the outcome as text: no model ever made the call, so none is stored as if
// one had.
func (r *Runner) finishProposed(ctx context.Context, x *run) (steward.View, error) {
	var outcome []string
	for _, m := range x.st.Messages {
		for _, p := range m.Parts {
			if res := p.ToolResult; res != nil {
				outcome = append(outcome, fmt.Sprintf("%s: %s", res.Name, res.Output))
			}
		}
	}
	answer := strings.Join(outcome, "\n")
	x.st.Messages = []steward.Message{x.st.Messages[0], {Role: steward.RoleModel, Parts: []steward.Part{{Text: answer}}}}
	return r.finish(ctx, x, steward.StatusCompleted, answer, "")
}
