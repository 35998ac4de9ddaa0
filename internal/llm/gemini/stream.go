package gemini

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/llm"
	"github.com/stewardhq/steward/internal/llm/retry"
)

// stream runs a streaming call: it hands each chunk's answer text to onDelta as it arrives
// and assembles the chunks into one response. A call that fails before its first chunk is
// retried; one that fails later is not, since onDelta may have seen text.
func (m *Model) stream(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig, onDelta llm.DeltaFunc) (llm.Response, error) {
	var a assembler
	err := m.retry.Do(ctx, func(ctx context.Context) error {
		started := false
		for chunk, err := range m.client.Models.GenerateContentStream(ctx, m.name, contents, config) {
			if err != nil {
				if started {
					return retry.Permanent(err)
				}
				return err
			}
			started = true
			for _, p := range candidateParts(chunk) {
				if p != nil && isText(p) && !p.Thought && p.Text != "" {
					if err := onDelta(p.Text); err != nil {
						return retry.Permanent(fmt.Errorf("delta: %w", err))
					}
				}
			}
			a.add(chunk)
		}
		return nil
	})
	if err != nil {
		return llm.Response{}, m.unavailable(fmt.Errorf("gemini: stream content: %w", err))
	}
	return m.toResponse(a.result)
}

// assembler merges the chunks of a stream into one result. Consecutive text chunks of the same
// kind (answer or thought) become one part. A thought signature stays on the part it belongs
// to: one arriving with text, or on an empty part of its own, closes the text part before it,
// so later text starts a new part; a signature with no open text part before it (or on a
// function call) keeps a part of its own.
type assembler struct {
	result
	open bool // the last part is text that later chunks may extend
}

func (a *assembler) add(chunk *genai.GenerateContentResponse) {
	if len(chunk.Candidates) > 0 {
		a.hasCandidate = true
		if reason := chunk.Candidates[0].FinishReason; reason != "" {
			a.reason = reason
		}
	}
	if chunk.PromptFeedback != nil {
		a.feedback = chunk.PromptFeedback
	}
	if chunk.UsageMetadata != nil {
		a.usage = chunk.UsageMetadata
	}
	if chunk.ModelVersion != "" {
		a.version = chunk.ModelVersion
	}
	for _, p := range candidateParts(chunk) {
		if p != nil {
			a.addPart(p)
		}
	}
}

func (a *assembler) addPart(p *genai.Part) {
	signed := len(p.ThoughtSignature) > 0
	if !isText(p) {
		a.parts = append(a.parts, p)
		a.open = false
		return
	}
	if a.open {
		last := a.parts[len(a.parts)-1]
		if p.Text == "" || p.Thought == last.Thought {
			last.Text += p.Text
			if signed {
				last.ThoughtSignature = p.ThoughtSignature
				a.open = false
			}
			return
		}
	}
	if p.Text == "" && !signed {
		return
	}
	a.parts = append(a.parts, &genai.Part{Text: p.Text, Thought: p.Thought, ThoughtSignature: p.ThoughtSignature})
	a.open = !signed
}
