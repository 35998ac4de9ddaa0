package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/steward"
)

// result is what one call produced, from a single response or assembled from a stream.
type result struct {
	parts    []*genai.Part
	reason   genai.FinishReason
	feedback *genai.GenerateContentResponsePromptFeedback
	usage    *genai.GenerateContentResponseUsageMetadata
	version  string
	// hasCandidate is false when the model produced no candidate at all.
	hasCandidate bool
}

// resultOf returns what a non-streamed response holds.
func resultOf(resp *genai.GenerateContentResponse) result {
	r := result{
		parts:        candidateParts(resp),
		feedback:     resp.PromptFeedback,
		usage:        resp.UsageMetadata,
		version:      resp.ModelVersion,
		hasCandidate: len(resp.Candidates) > 0,
	}
	if r.hasCandidate {
		r.reason = resp.Candidates[0].FinishReason
	}
	return r
}

// candidateParts returns the parts of the first candidate.
func candidateParts(resp *genai.GenerateContentResponse) []*genai.Part {
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil
	}
	return resp.Candidates[0].Content.Parts
}

// toResponse converts a result to an llm.Response. A blocked prompt is a response, not an
// error; a response with neither a candidate nor a block reason is an error.
func (m *Model) toResponse(r result) (llm.Response, error) {
	resp := llm.Response{
		Message: steward.Message{Role: steward.RoleModel},
		Usage:   toUsage(r.usage),
		Model:   m.name,
	}
	if r.version != "" {
		resp.Model = r.version
	}
	if r.feedback != nil && r.feedback.BlockReason != "" {
		resp.Finish = llm.FinishBlocked
		resp.FinishDetail = string(r.feedback.BlockReason)
		return resp, nil
	}
	if !r.hasCandidate {
		return llm.Response{}, errors.New("gemini: response has no candidate")
	}
	parts, err := fromParts(r.parts)
	if err != nil {
		return llm.Response{}, fmt.Errorf("gemini: %w", err)
	}
	resp.Message.Parts = parts
	resp.Finish = toFinish(r.reason, len(resp.ToolCalls()) > 0)
	resp.FinishDetail = string(r.reason)
	return resp, nil
}

// fromParts converts the model's parts: text and thoughts, and function calls. A call without
// an id gets a minted one. Each part's thought signature is kept as its ProviderMeta.
func fromParts(parts []*genai.Part) ([]steward.Part, error) {
	out := make([]steward.Part, 0, len(parts))
	for _, p := range parts {
		if p == nil {
			continue
		}
		lp := steward.Part{ProviderMeta: cloneBytes(p.ThoughtSignature)}
		switch {
		case p.FunctionCall != nil:
			tc, err := fromCall(p.FunctionCall)
			if err != nil {
				return nil, err
			}
			lp.ToolCall = tc
		case isText(p) && (p.Text != "" || len(p.ThoughtSignature) > 0):
			lp.Text = p.Text
			lp.Thought = p.Thought
		default:
			continue
		}
		out = append(out, lp)
	}
	return out, nil
}

func fromCall(fc *genai.FunctionCall) (*steward.ToolCall, error) {
	args := json.RawMessage("{}")
	if len(fc.Args) > 0 {
		b, err := json.Marshal(fc.Args)
		if err != nil {
			return nil, fmt.Errorf("function call %s args: %w", fc.Name, err)
		}
		args = b
	}
	tc := &steward.ToolCall{ID: fc.ID, Name: fc.Name, Args: args}
	if tc.ID == "" {
		tc.ID = mintID()
		tc.MintedID = true
	}
	return tc, nil
}

// isText reports whether p is a text or thought part (possibly empty, carrying only a
// signature) rather than a call, a response or media.
func isText(p *genai.Part) bool {
	return p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil &&
		p.FileData == nil && p.ExecutableCode == nil && p.CodeExecutionResult == nil &&
		p.ToolCall == nil && p.ToolResponse == nil
}

// mintID returns a fresh id for a function call Gemini sent without one.
func mintID() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails: crypto/rand aborts the program instead
	return "call_" + hex.EncodeToString(b)
}

// toFinish maps Gemini's finish reason. An empty reason (a stream cut before its last chunk
// says why) counts as a normal stop. Reasons that are neither a stop, the token limit nor a
// block (a malformed function call, an unsupported language, OTHER) mean the model gave no
// usable answer: llm.FinishRefused.
func toFinish(reason genai.FinishReason, hasCalls bool) llm.Finish {
	switch reason {
	case "", genai.FinishReasonUnspecified, genai.FinishReasonStop:
		if hasCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case genai.FinishReasonMaxTokens:
		return llm.FinishMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return llm.FinishBlocked
	default:
		return llm.FinishRefused
	}
}

// toUsage converts usage metadata. Thinking tokens are billed as output; tool-use prompt
// tokens as input. Cached tokens are a part of the input tokens.
func toUsage(u *genai.GenerateContentResponseUsageMetadata) steward.Usage {
	if u == nil {
		return steward.Usage{}
	}
	return steward.Usage{
		InputTokens:  int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
		OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
		CachedTokens: int64(u.CachedContentTokenCount),
	}
}

func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return append([]byte(nil), b...)
}
