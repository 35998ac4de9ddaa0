package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// toConfig builds the generation config of a request to model: system instruction, tools,
// function calling mode, thinking and the output limit. Function calling stays manual: the Go
// SDK never runs the declared functions.
func toConfig(req llm.Request, model string) (*genai.GenerateContentConfig, error) {
	if req.ForceTool != "" && req.NoToolCalls {
		return nil, fmt.Errorf("request both forces tool %s and forbids tool calls", req.ForceTool)
	}
	config := &genai.GenerateContentConfig{ThinkingConfig: thinkingConfig(model, req.Thinking)}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxOutputTokens > 0 {
		config.MaxOutputTokens = int32(min(req.MaxOutputTokens, math.MaxInt32))
	}
	if len(req.Tools) > 0 {
		decls, err := toolJSON.encode(req.Tools)
		if err != nil {
			return nil, err
		}
		// The declarations go into the body as the JSON encoded once for this tool set, after
		// the SDK built it: in the config, the SDK would marshal them to JSON, decode that into
		// maps and marshal the maps again for every request (the largest part of a request's
		// CPU). Gemini reads the same "tools" either way.
		config.HTTPOptions = &genai.HTTPOptions{ExtrasRequestProvider: func(body map[string]any) map[string]any {
			body["tools"] = decls
			return body
		}}
		switch {
		case req.ForceTool != "":
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{req.ForceTool}}}
		case req.NoToolCalls:
			config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeNone}}
		}
	}
	return config, nil
}

// thinkingConfig maps a reasoning effort to the form model's family takes: thinkingLevel from
// Gemini 3 on (every Gemini 3 model takes LOW), a thinkingBudget for Gemini 2.5 (0 turns
// thinking off on Flash and Flash-Lite; Pro cannot turn it off and takes at least 128). A
// request may not carry both (the API answers 400), and a model not known to think gets
// neither. See ai.google.dev/gemini-api/docs/thinking.
func thinkingConfig(model string, t llm.Thinking) *genai.ThinkingConfig {
	if t != llm.ThinkingLow {
		return nil
	}
	major, minor, ok := version(model)
	switch {
	case !ok:
		return nil
	case major >= 3:
		return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}
	case major == 2 && minor == 5:
		budget := int32(0)
		if strings.Contains(model, "-pro") {
			budget = 128
		}
		return &genai.ThinkingConfig{ThinkingBudget: &budget}
	}
	return nil
}

// version reads the generation of a Gemini model name: "gemini-2.5-flash" is 2.5,
// "models/gemini-3-flash-preview" 3.0. ok is false for a name that does not say.
func version(model string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimPrefix(model, "models/"), "gemini-")
	if !found {
		return 0, 0, false
	}
	num, _, _ := strings.Cut(rest, "-")
	majorStr, minorStr, hasMinor := strings.Cut(num, ".")
	major, err := strconv.Atoi(majorStr)
	if err != nil {
		return 0, 0, false
	}
	if hasMinor {
		if minor, err = strconv.Atoi(minorStr); err != nil {
			return 0, 0, false
		}
	}
	return major, minor, true
}

// validatesSignatures reports whether model requires a thought signature on the first
// function call of each step of the current turn (Gemini 3 and later answer 400 without).
func validatesSignatures(model string) bool {
	major, _, ok := version(model)
	return ok && major >= 3
}

// signCurrentTurn gives the first function call of each model step of the current turn (from
// the last user content that is not only function responses) skipSignature when it has no
// thought signature: its own was dropped because another model made it (docs: thought
// signatures FAQ). Real signatures are never replaced, and earlier turns are not checked.
func signCurrentTurn(contents []*genai.Content) {
	start := -1
	for i := len(contents) - 1; i >= 0 && start < 0; i-- {
		if contents[i].Role != genai.RoleUser {
			continue
		}
		for _, p := range contents[i].Parts {
			if p.FunctionResponse == nil {
				start = i
				break
			}
		}
	}
	if start < 0 {
		return
	}
	for _, c := range contents[start+1:] {
		if c.Role != genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				if len(p.ThoughtSignature) == 0 {
					p.ThoughtSignature = []byte(skipSignature)
				}
				break
			}
		}
	}
}

// toContents converts the conversation to Gemini contents, one per message. A message of tool
// results becomes one user content holding every function response in the message's order.
func toContents(msgs []steward.Message) ([]*genai.Content, error) {
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

func toContent(msg steward.Message) (*genai.Content, error) {
	var role string
	switch msg.Role {
	case steward.RoleUser:
		role = genai.RoleUser
	case steward.RoleModel:
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
func toPart(p steward.Part) (*genai.Part, error) {
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

// toolCache holds the JSON of a request's tool declarations — [{"functionDeclarations":
// [...]}], as Gemini takes them in "tools" — by a hash of the declarations, with the
// declarations themselves to compare: the same tools go out with every request. An entry is
// shared by concurrent requests and only read. The cache is emptied when it reaches
// maxToolSets entries, which bounds it when MCP servers change.
type toolCache struct {
	seed maphash.Seed
	mu   sync.RWMutex
	m    map[uint64]toolSet
}

// toolSet is one cached entry: the declarations (a copy) and their JSON.
type toolSet struct {
	tools []llm.ToolDecl
	json  json.RawMessage
}

const maxToolSets = 256

var toolJSON = toolCache{seed: maphash.MakeSeed()}

// encode returns the JSON of tools' declarations, from the cache when they were encoded
// before. A tool whose parameters are not JSON is an error.
func (c *toolCache) encode(tools []llm.ToolDecl) (json.RawMessage, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, t := range tools {
		for _, s := range []string{t.Name, t.Description} {
			maphash.WriteComparable(&h, len(s))
			h.WriteString(s)
		}
		maphash.WriteComparable(&h, len(t.Parameters))
		h.Write(t.Parameters)
	}
	key := h.Sum64()
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if ok && slices.EqualFunc(e.tools, tools, sameDecl) {
		return e.json, nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	kept := make([]llm.ToolDecl, 0, len(tools))
	for _, t := range tools {
		decl := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
		if len(bytes.TrimSpace(t.Parameters)) > 0 {
			if _, err := decodeJSON(t.Parameters); err != nil {
				return nil, fmt.Errorf("tool %s parameters: %w", t.Name, err)
			}
			decl.ParametersJsonSchema = t.Parameters
		}
		decls = append(decls, decl)
		t.Parameters = slices.Clone(t.Parameters)
		kept = append(kept, t)
	}
	v, err := json.Marshal([]*genai.Tool{{FunctionDeclarations: decls}})
	if err != nil {
		return nil, fmt.Errorf("tool declarations: %w", err)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxToolSets {
		c.m = make(map[uint64]toolSet)
	}
	c.m[key] = toolSet{tools: kept, json: v}
	c.mu.Unlock()
	return v, nil
}

// sameDecl reports whether two declarations are the same.
func sameDecl(a, b llm.ToolDecl) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Parameters, b.Parameters)
}

// skipSignature is the thought signature Gemini documents for a function call whose own
// signature is not available: it skips the signature check of Gemini 3 and later
// (ai.google.dev/gemini-api/docs/thought-signatures, FAQ).
const skipSignature = "skip_thought_signature_validator"
