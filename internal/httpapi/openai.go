package httpapi

import (
	"context"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/openaiapi"
)

// mountOpenAI serves the OpenAI-compatible API (internal/openaiapi) behind the same bearer-key
// auth as /v1, its errors in OpenAI's shape.
func (a *api) mountOpenAI(r chi.Router) {
	o := &openaiapi.API{Service: &openaiapi.Service{Runner: a.d.Runner, Conversations: a.d.Activity}, MaxBodyBytes: a.d.MaxBodyBytes,
		Owner: func(ctx context.Context) uuid.UUID { return principal(ctx).OwnerID }, Admit: a.admit}
	r.Group(func(r chi.Router) {
		r.Use(openaiapi.InOpenAIShape(a.authenticate))
		r.Post("/v1/chat/completions", o.ChatCompletions)
		r.Get("/v1/models", o.Models)
	})
}
