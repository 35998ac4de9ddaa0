package openaiapi_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestDatabaseOutageIs503: with the database stopped, the OpenAI face answers as the API
// does (docs/RELIABILITY.md): 503 with Retry-After and words in OpenAI's error shape, never a
// 500 — an OpenAI client retries a 503 after Retry-After and gives up on a 500.
func TestDatabaseOutageIs503(t *testing.T) {
	out := testdb.NewOutage(t, os.Getenv("APP_DATABASE_URL"))
	e := apptest.New(t, apptest.Options{Through: out.Through})
	_, key := e.DB.Owner(t, "alice")
	client := openai.NewClient(option.WithBaseURL(e.Server.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
	chat := openai.ChatCompletionNewParams{Model: "steward", Messages: history([]string{"hello"})}
	if _, err := client.Chat.Completions.New(context.Background(), chat); err != nil {
		t.Fatalf("chat with the database up: %v", err)
	}
	out.Down()
	_, err := client.Chat.Completions.New(context.Background(), chat)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("chat with the database down: %v", err)
	}
	if apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.Code != "unavailable" || apiErr.Type != "server_error" ||
		apiErr.Message == "" || apiErr.Response.Header.Get("Retry-After") == "" {
		t.Fatalf("chat with the database down: %d %s %s %q, Retry-After %q", apiErr.StatusCode, apiErr.Type, apiErr.Code,
			apiErr.Message, apiErr.Response.Header.Get("Retry-After"))
	}
}
