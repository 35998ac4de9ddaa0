package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
)

// testNow is the fixed clock of test environments.
var testNow = time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)

// testEnv returns an Env with a fixed clock and a fresh in-memory Data.
func testEnv() (Env, *memData) {
	d := newMemData()
	return Env{OwnerID: uuid.New(), TurnID: uuid.New(), Now: func() time.Time { return testNow }, Data: d}, d
}

// run runs a built-in tool and decodes its output into a map.
func run(t *testing.T, env Env, name, args string) map[string]any {
	t.Helper()
	out, err := DefaultRegistry().Run(context.Background(), env, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s(%s): output %s: %v", name, args, out, err)
	}
	return m
}

// runArgErr runs a built-in tool that must reject its arguments and returns the *ArgError.
func runArgErr(t *testing.T, env Env, name, args string) *ArgError {
	t.Helper()
	out, err := DefaultRegistry().Run(context.Background(), env, name, json.RawMessage(args))
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("%s(%s) = %s, %v; want an *ArgError", name, args, out, err)
	}
	if ae.Tool != name {
		t.Errorf("ArgError.Tool = %q, want %q", ae.Tool, name)
	}
	return ae
}
