package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/llm"
)

// BenchmarkToolDeclarations is the per-request cost of a cached tool set of 30 tools.
func BenchmarkToolDeclarations(b *testing.B) {
	tools := make([]llm.ToolDecl, 30)
	for i := range tools {
		tools[i] = llm.ToolDecl{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("Does a thing. ", 10),
			Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"` + strings.Repeat("x", 400) + `"}},"required":["title"]}`)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toolJSON.encode(tools); err != nil {
			b.Fatal(err)
		}
	}
}
