package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stewardhq/steward/internal/steward"
)

// NewRaw builds a tool from a JSON Schema given as JSON rather than derived from a Go type:
// a tool another server declares (an MCP server's). Its arguments are checked
// against the schema and handed to run as they came. A schema that cannot be resolved is
// kept as the tool's error and reported by NewRegistry, like New's.
func NewRaw(name, description string, kind steward.ToolKind, schema json.RawMessage, run func(ctx context.Context, env Env, args json.RawMessage) (any, error)) Tool {
	t := Tool{Name: name, Description: description, Kind: kind}
	if run == nil {
		t.err = fmt.Errorf("tool %q: nil run function", name)
		return t
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.err = fmt.Errorf("tool %q: input schema: %w", name, err)
		return t
	}
	if s.Type != "object" {
		t.err = fmt.Errorf("tool %q: input schema is not an object schema", name)
		return t
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		t.err = fmt.Errorf("tool %q: resolve schema: %w", name, err)
		return t
	}
	if t.params, err = canonicalSchema(&s); err != nil {
		t.err = fmt.Errorf("tool %q: %w", name, err)
		return t
	}
	t.check = func(raw json.RawMessage) error {
		_, err := decodeArgs[map[string]any](resolved, raw)
		return err
	}
	t.exec = func(ctx context.Context, env Env, raw json.RawMessage) (any, error) {
		if _, err := decodeArgs[map[string]any](resolved, raw); err != nil {
			return nil, err
		}
		return run(ctx, env, raw)
	}
	return t
}

// Err is the error a tool was built with (an unusable schema), or nil.
func (t Tool) Err() error { return t.err }

// With returns a registry of r's tools and extra ones (an owner's MCP tools for one turn),
// checked like NewRegistry's; r is unchanged.
func (r *Registry) With(extra ...Tool) (*Registry, error) {
	if len(extra) == 0 {
		return r, nil
	}
	all := make([]Tool, 0, len(r.names)+len(extra))
	for _, n := range r.names {
		all = append(all, r.tools[n])
	}
	return NewRegistry(slices.Concat(all, extra)...)
}
