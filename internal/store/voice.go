package store

import (
	"context"

	"github.com/stewardhq/steward/db"
	"github.com/stewardhq/steward/internal/steward"
)

// Voice is the owner's voice calls (docs/ARCHITECTURE.md §18): each one's cost counts against
// the owner's daily budget and the deployment's cap, as a turn's does.
type Voice struct{ *conn }

// VoiceCall is one transcription or speech, priced.
type VoiceCall struct {
	Kind        string // "transcribe" or "speak"
	Model       string
	DurationMS  int64
	Usage       steward.Usage
	AudioTokens int64
	Estimated   bool
	CostMicros  int64
}

// Record stores c; its cost is added to the owner's day when the transaction commits.
func (v Voice) Record(ctx context.Context, c VoiceCall) error {
	return notFoundOrNil("record voice call", v.q.RecordVoiceCall(ctx, db.RecordVoiceCallParams{OwnerID: v.ownerID,
		Kind: c.Kind, Model: c.Model, DurationMs: c.DurationMS, InputTokens: c.Usage.InputTokens,
		OutputTokens: c.Usage.OutputTokens, AudioTokens: c.AudioTokens, Estimated: c.Estimated, CostMicros: c.CostMicros}))
}

// Today is the owner's voice calls since midnight UTC and their cost in millionths of a dollar.
func (v Voice) Today(ctx context.Context) (calls, costMicros int64, err error) {
	r, err := v.q.VoiceCallsToday(ctx, v.ownerID)
	if err != nil {
		return 0, 0, notFound("voice calls today", err)
	}
	return r.Calls, r.CostMicros, nil
}
