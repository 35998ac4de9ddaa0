package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
)

// searchMemoryLimit is how many facts search_memory returns at most.
const searchMemoryLimit = 10

// searchMemoryArgs are the arguments of search_memory.
type searchMemoryArgs struct {
	Query string `json:"query" jsonschema:"keywords to look for in remembered facts"`
}

// Check trims the query and checks its length.
func (a *searchMemoryArgs) Check() error {
	a.Query = strings.TrimSpace(a.Query)
	return tools.CheckLength("query", a.Query, 1, 500)
}

// searchMemoryTool returns the search_memory tool (read).
func searchMemoryTool() tools.Tool {
	return tools.Say(tools.New("search_memory",
		"Search remembered facts by keywords. Returns at most 10 facts.",
		steward.KindRead,
		func(ctx context.Context, env tools.Env, a searchMemoryArgs) (any, error) {
			d, err := env.RequireData()
			if err != nil {
				return nil, err
			}
			facts, err := d.SearchFacts(ctx, a.Query, searchMemoryLimit)
			if err != nil {
				return nil, fmt.Errorf("search facts: %w", err)
			}
			if facts == nil {
				facts = []steward.Fact{}
			}
			if n := untrustedFacts(facts); n > 0 {
				// Outside words are in the turn from now on (docs/ARCHITECTURE.md §3).
				env.TaintedBy("search_memory: " + tools.Count(n, "fact") + " stored by a turn that read outside content")
			}
			return map[string]any{"facts": facts}, nil
		}), saySearchMemory, saidSearchMemory)
}

// untrustedFacts counts the facts a tainted turn stored (steward.Fact.Untrusted).
func untrustedFacts(facts []steward.Fact) int {
	n := 0
	for _, f := range facts {
		if f.Untrusted {
			n++
		}
	}
	return n
}

func saySearchMemory(a searchMemoryArgs) string { return "Search memory for " + tools.Quote(a.Query) }

func saidSearchMemory(_ searchMemoryArgs, o struct {
	Facts []json.RawMessage `json:"facts"`
}) string {
	return "Found " + tools.Count(len(o.Facts), "fact")
}
