package httpapi

import (
	"context"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/openaiapi"
)

// mountOpenAI serves the OpenAI-compatible API (internal/openaiapi) behind the same bearer-key
// auth as /v1, its errors in OpenAI's shape. Without Deps.OpenAI the routes are not mounted.
func (a *api) mountOpenAI(r chi.Router) {
	if a.d.OpenAI == nil {
		return
	}
	o := &openaiapi.API{Service: a.d.OpenAI, MaxBodyBytes: a.d.MaxBodyBytes,
		Owner: func(ctx context.Context) uuid.UUID { return principal(ctx).OwnerID }, Admit: a.admit}
	r.Group(func(r chi.Router) {
		r.Use(openaiapi.InOpenAIShape(a.authenticate))
		r.Post("/v1/chat/completions", o.ChatCompletions)
		r.Get("/v1/models", o.Models)
	})
}
