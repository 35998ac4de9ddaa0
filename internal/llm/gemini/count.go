package gemini

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"github.com/stewardhq/steward/internal/steward"
)

// CountTokens is Gemini's countTokens of msgs, sent as the contents Generate would send for
// them (the same conversion, the same thought signatures). It counts contents only: the Gemini
// API's countTokens takes no system instruction and no tools (the SDK refuses them outside
// Vertex). It is how the context budget's estimate is calibrated (steward eval --calibrate).
func (m *Model) CountTokens(ctx context.Context, msgs []steward.Message) (int, error) {
	contents, err := m.contents(msgs)
	if err != nil {
		return 0, err
	}
	var resp *genai.CountTokensResponse
	if err := m.retry.Do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = m.client.Models.CountTokens(ctx, m.name, contents, nil)
		return err
	}); err != nil {
		return 0, m.unavailable(fmt.Errorf("gemini: count tokens: %w", err))
	}
	if resp.TotalTokens <= 0 {
		return 0, fmt.Errorf("gemini: count tokens: the API answered %d tokens", resp.TotalTokens)
	}
	return int(resp.TotalTokens), nil
}

// contents is msgs as the Gemini contents of a request to m.
func (m *Model) contents(msgs []steward.Message) ([]*genai.Content, error) {
	contents, err := toContents(msgs)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if validatesSignatures(m.name) {
		signCurrentTurn(contents)
	}
	return contents, nil
}
