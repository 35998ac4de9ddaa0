package codetools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/script"
	"github.com/stewardhq/steward/internal/tools"
	"github.com/stewardhq/steward/internal/tools/codetools"
)

// TestRunCodeBusyIsAResult: when the owner already holds its share of the sandbox's slots,
// run_code answers with a refusal the model reads and can pass on (the turn goes on), and
// another owner's run_code still runs.
func TestRunCodeBusyIsAResult(t *testing.T) {
	ctx := context.Background()
	runCode := codetools.Tools(nil)[0]
	alice, bob := uuid.New(), uuid.New()
	for range script.Slots.PerOwner {
		release, err := script.Slots.Acquire(ctx, alice, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(release)
	}
	_, err := runCode.Run(ctx, tools.Env{OwnerID: alice}, []byte(`{"code":"1 + 1"}`))
	if !tools.ForModel(err) || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("alice: %v; want a refusal the model reads", err)
	}
	out, err := runCode.Run(ctx, tools.Env{OwnerID: bob}, []byte(`{"code":"1 + 1"}`))
	if err != nil || !strings.Contains(string(out), `"result":2`) {
		t.Fatalf("bob: %s %v", out, err)
	}
}
