package app

import (
	"context"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/config"
)

// TestNewToolsWeb: web_fetch is always offered; web_search only with a backend (SearXNG or
// a Gemini key).
func TestNewToolsWeb(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		cfg        config.Config
		wantSearch bool
	}{
		{"no backend", config.Config{}, false},
		{"searxng", config.Config{SearchURL: "https://searx.example.org"}, true},
		{"gemini", config.Config{GeminiAPIKey: "k", FastModel: "gemini-fast"}, true},
	} {
		reg, err := newTools(context.Background(), tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		names := reg.Names()
		if !slices.Contains(names, "web_fetch") || !slices.Contains(names, "create_task") {
			t.Errorf("%s: tools %v", tc.name, names)
		}
		if slices.Contains(names, "web_search") != tc.wantSearch {
			t.Errorf("%s: tools %v, want web_search %v", tc.name, names, tc.wantSearch)
		}
	}
}
