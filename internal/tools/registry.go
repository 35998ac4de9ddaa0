package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/llm"
)

// ErrUnknownTool is returned (wrapped, with the name) for a call of a tool the registry does
// not hold. Its message is fit for the model.
var ErrUnknownTool = errors.New("unknown tool")

// validName is what every model provider accepts as a function name.
var validName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`)

// Registry is an immutable set of tools, safe for concurrent use.
type Registry struct {
	tools map[string]Tool
	names []string // sorted
	decls []llm.ToolDecl
}

// NewRegistry builds a registry of tools. A duplicate or invalid name, an unknown kind, an
// empty description or a tool that failed to build is an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		if t.err != nil {
			return nil, t.err
		}
		if !validName.MatchString(t.Name) {
			return nil, fmt.Errorf("tool %q: invalid name", t.Name)
		}
		if t.Kind != steward.KindRead && t.Kind != steward.KindWrite {
			return nil, fmt.Errorf("tool %q: unknown kind %q", t.Name, t.Kind)
		}
		if t.Description == "" {
			return nil, fmt.Errorf("tool %q: empty description", t.Name)
		}
		if t.exec == nil {
			return nil, fmt.Errorf("tool %q was not built with tools.New", t.Name)
		}
		if err := t.coherent(); err != nil {
			return nil, err
		}
		if err := t.checkMoney(); err != nil {
			return nil, err
		}
		if _, dup := r.tools[t.Name]; dup {
			return nil, fmt.Errorf("duplicate tool %q", t.Name)
		}
		r.tools[t.Name] = t
		r.names = append(r.names, t.Name)
	}
	slices.Sort(r.names)
	for _, n := range r.names {
		r.decls = append(r.decls, r.tools[n].Decl())
	}
	return r, nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the tool names, sorted.
func (r *Registry) Names() []string {
	return slices.Clone(r.names)
}

// Declarations returns the declarations of all tools for the model, sorted by name, each
// schema in canonical JSON, so that the same registry always yields the same bytes.
func (r *Registry) Declarations() []llm.ToolDecl {
	out := make([]llm.ToolDecl, len(r.decls))
	for i, d := range r.decls {
		d.Parameters = slices.Clone(d.Parameters)
		out[i] = d
	}
	return out
}

// Validate checks the arguments of a call of name without running it. An unknown tool gives
// an error wrapping ErrUnknownTool, invalid arguments an *ArgError.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	t, err := r.lookup(name)
	if err != nil {
		return err
	}
	return t.Validate(args)
}

// Run validates the arguments of a call of name, runs the tool and returns its JSON output.
// An unknown tool gives an error wrapping ErrUnknownTool, invalid arguments an *ArgError;
// both are meant to go back to the model as a readable error result.
func (r *Registry) Run(ctx context.Context, env Env, name string, args json.RawMessage) (json.RawMessage, error) {
	t, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	return t.Run(ctx, env, args)
}

// lookup returns the tool called name or an ErrUnknownTool error listing the known ones.
func (r *Registry) lookup(name string) (Tool, error) {
	t, ok := r.tools[name]
	if !ok {
		return Tool{}, fmt.Errorf("%w %q (available tools: %s)", ErrUnknownTool, truncate(name, 64), strings.Join(r.names, ", "))
	}
	return t, nil
}

// RuleTool is "*" in a standing rule: the rule covers every write tool.
const RuleTool = "*"

// CheckRule is the one check of what a standing rule names (the API's POST /v1/rules and
// every other face that stores rules call it): a registered write tool, or RuleTool, and in
// its predicate only arguments that tool has (for RuleTool, that some write tool has).
// Rules only ever decide writes (reads run without the gate), so a rule on a read tool, an
// unknown name or an argument no call carries would be stored and never apply as it reads;
// each is CodeInvalid, listing the valid names. So is an allow rule for a tool the gate asks
// about every time (Tool.NoRuleWhy), which would be listed as "allow" and never run a call.
func (r *Registry) CheckRule(name, effect string, args []string) error {
	var writes []string
	for _, n := range r.names {
		if r.tools[n].Kind == steward.KindWrite {
			writes = append(writes, n)
		}
	}
	if name != RuleTool {
		t, ok := r.tools[name]
		if !ok || t.Kind != steward.KindWrite {
			return steward.Errorf(steward.CodeInvalid, "tool %q is not a write tool; a rule names one of %s, or %q for every write tool",
				truncate(name, 64), strings.Join(writes, ", "), RuleTool)
		}
		for _, a := range args {
			if !slices.Contains(t.args, a) {
				return steward.Errorf(steward.CodeInvalid, "the predicate names the argument %q, which %s does not have (its arguments: %s), so the rule would never apply",
					truncate(a, 64), name, orNone(t.args))
			}
		}
		if why := t.NoRuleWhy(); effect == "allow" && why != "" {
			return steward.Errorf(steward.CodeInvalid, "an allow rule for %s would never apply: %s (a deny rule is honoured)", name, why)
		}
		return nil
	}
	for _, a := range args {
		if !slices.ContainsFunc(writes, func(n string) bool { return slices.Contains(r.tools[n].args, a) }) {
			return steward.Errorf(steward.CodeInvalid, "the predicate names the argument %q, which no write tool has, so the rule would never apply", truncate(a, 64))
		}
	}
	return nil
}

// orNone joins names with commas, or says "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
