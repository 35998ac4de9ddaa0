// Package toolstest is what the tests of the tools and their callers share: the built-in and
// ledger tools as one list (Tools, Registry), an in-memory Data (MemData) and an Env with a
// fixed clock. It is test support, not a toolset.
package toolstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/builtin"
	"github.com/stewardhq/steward/internal/tools/ledgertools"

	"github.com/google/uuid"
)

// Now is the fixed clock of test environments.
var Now = time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)

// Tools is the built-in tools and the ledger's: what most tests register.
func Tools() []tools.Tool {
	return slices.Concat(builtin.Tools(), ledgertools.Tools())
}

// Registry is a registry of Tools. It panics only if a tool is broken, which the toolsets'
// tests rule out.
func Registry() *tools.Registry {
	r, err := tools.NewRegistry(Tools()...)
	if err != nil {
		panic(fmt.Sprintf("toolstest: registry: %v", err))
	}
	return r
}

// Env returns an Env with a fixed clock and a fresh in-memory Data.
func Env() (tools.Env, *MemData) {
	d := NewMemData()
	return tools.Env{OwnerID: uuid.New(), TurnID: uuid.New(), Now: func() time.Time { return Now }, Data: d}, d
}

// Run runs a built-in tool and decodes its output into a map.
func Run(t *testing.T, env tools.Env, name, args string) map[string]any {
	t.Helper()
	out, err := Registry().Run(context.Background(), env, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s(%s): output %s: %v", name, args, out, err)
	}
	return m
}

// RunArgErr runs a built-in tool that must reject its arguments and returns the *ArgError.
func RunArgErr(t *testing.T, env tools.Env, name, args string) *tools.ArgError {
	t.Helper()
	out, err := Registry().Run(context.Background(), env, name, json.RawMessage(args))
	var ae *tools.ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("%s(%s) = %s, %v; want an *tools.ArgError", name, args, out, err)
	}
	if ae.Tool != name {
		t.Errorf("ArgError.Tool = %q, want %q", ae.Tool, name)
	}
	return ae
}

// Policy words what a tool declares about itself — its kind, then each policy it sets, in a
// fixed order (e.g. "write money reversible") — for the toolsets' tests to compare with what
// each tool is meant to be.
func Policy(t tools.Tool) string {
	words := []string{string(t.Kind)}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"external", t.External}, {"money", t.Money != nil}, {"rules-never-allow", t.Rules == steward.RulesNeverAllow},
		{"only-owner-yes", t.Rules == steward.OnlyOwnerYes}, {"rules-may-allow", t.Rules == steward.RulesMayAllow},
		{"links", t.Links != nil}, {"untrusted", t.Untrusted}, {"reversible", t.Reversible}, {"playbook", t.Playbook},
		{"preview", t.Preview != nil}, {"estimate", t.Estimate != nil},
	} {
		if f.set {
			words = append(words, f.name)
		}
	}
	return strings.Join(words, " ")
}
