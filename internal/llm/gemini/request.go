package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
)

// toConfig builds the generation config of a request: system instruction, tools and the
// output limit. Function calling stays manual: the Go SDK never runs the declared functions.
func toConfig(req llm.Request) (*genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxOutputTokens > 0 {
		config.MaxOutputTokens = int32(min(req.MaxOutputTokens, math.MaxInt32))
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decl := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 {
				schema, err := decodeJSON(t.Parameters)
				if err != nil {
					return nil, fmt.Errorf("tool %s parameters: %w", t.Name, err)
				}
				decl.ParametersJsonSchema = schema
			}
			decls = append(decls, decl)
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if req.ForceTool != "" {
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{req.ForceTool}}}
		}
	}
	return config, nil
}

// toContents converts the conversation to Gemini contents, one per message. A message of tool
// results becomes one user content holding every function response in the message's order.
func toContents(msgs []llm.Message) ([]*genai.Content, error) {
	contents := make([]*genai.Content, 0, len(msgs))
	for i, msg := range msgs {
		c, err := toContent(msg)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if len(c.Parts) > 0 {
			contents = append(contents, c)
		}
	}
	return contents, nil
}

func toContent(msg llm.Message) (*genai.Content, error) {
	var role string
	switch msg.Role {
	case llm.RoleUser:
		role = genai.RoleUser
	case llm.RoleModel:
		role = genai.RoleModel
	default:
		return nil, fmt.Errorf("unknown role %q", msg.Role)
	}
	c := &genai.Content{Role: role, Parts: make([]*genai.Part, 0, len(msg.Parts))}
	for _, p := range msg.Parts {
		gp, err := toPart(p)
		if err != nil {
			return nil, err
		}
		if gp != nil {
			c.Parts = append(c.Parts, gp)
		}
	}
	return c, nil
}

// toPart converts one part; it returns nil for a part that carries nothing. Minted ids are
// dropped: Gemini never saw them.
func toPart(p llm.Part) (*genai.Part, error) {
	gp := &genai.Part{ThoughtSignature: p.ProviderMeta}
	switch {
	case p.ToolCall != nil:
		tc := p.ToolCall
		args, err := decodeArgs(tc.Args)
		if err != nil {
			return nil, fmt.Errorf("tool call %s (%s) args: %w", tc.ID, tc.Name, err)
		}
		gp.FunctionCall = &genai.FunctionCall{Name: tc.Name, Args: args}
		if !tc.MintedID {
			gp.FunctionCall.ID = tc.ID
		}
	case p.ToolResult != nil:
		tr := p.ToolResult
		out, err := decodeJSON(tr.Output)
		if err != nil {
			return nil, fmt.Errorf("tool result %s (%s) output: %w", tr.CallID, tr.Name, err)
		}
		key := "output"
		if tr.IsError {
			key = "error"
		}
		gp.FunctionResponse = &genai.FunctionResponse{Name: tr.Name, Response: map[string]any{key: out}}
		if !tr.MintedID {
			gp.FunctionResponse.ID = tr.CallID
		}
	case p.Text == "" && len(p.ProviderMeta) == 0:
		return nil, nil
	default:
		gp.Text = p.Text
		gp.Thought = p.Thought
	}
	return gp, nil
}

// decodeArgs decodes a tool call's arguments object; empty arguments are no arguments.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	return args, nil
}

// decodeJSON decodes a JSON value; empty input is null. Values are decoded here rather than
// handed to the SDK as raw JSON because the SDK does not report a request it fails to marshal.
func decodeJSON(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
