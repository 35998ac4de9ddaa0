package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
)

// TestCheckOutcomes: the checks read outcomes — calls in the journal (any order), argument
// subsets, executed writes, state and the answer — and name what failed.
func TestCheckOutcomes(t *testing.T) {
	t.Parallel()
	calls := []steward.CallRecord{
		{Tool: "list_tasks", Kind: steward.KindRead, Status: steward.CallSucceeded, Args: []byte(`{}`)},
		{Tool: "create_task", Kind: steward.KindWrite, Status: steward.CallSucceeded, Args: []byte(`{"title":"Call the Dentist","due":"2027-01-02"}`)},
	}
	res := Result{Status: "completed", Answer: "Added “call the dentist”.", Proposed: []string{"create_task"}}
	st := state{"tasks": {"Call the Dentist  due 2027-01-02T00:00:00Z [open]"}}
	one := 1
	pass := Expect{Status: "completed", Called: []string{"create_task", "list_tasks"}, CalledAny: []string{"x", "list_tasks"},
		NotCalled: []string{"web_fetch"}, Args: []ArgCheck{{Tool: "create_task", Subset: map[string]any{"title": "dentist"}}},
		Proposed: []string{"create_task"}, Contains: []string{"DENTIST"}, NotContains: []string{"sent"},
		State: []StateCheck{{Kind: "tasks", Contains: "due 2027-01-02", Count: &one}, {Kind: "tasks", Absent: "[done]"}}}
	if f := check(pass, res, calls, st); len(f) != 0 {
		t.Errorf("failures %q, want none", f)
	}
	fail := Expect{Status: "suspended", NotCalled: []string{"list_tasks"}, NoWrites: true,
		Args:  []ArgCheck{{Tool: "create_task", Subset: map[string]any{"due": "2027-05-05"}}},
		State: []StateCheck{{Kind: "facts", Contains: "peanut"}}}
	f := check(fail, res, calls, st)
	if len(f) != 5 {
		t.Errorf("failures %q, want 5 (status, list_tasks called, due argument, writes executed, no fact)", f)
	}
}

// TestRegressions: a lower pass count and a task that passed in the baseline and fails now
// are regressions; a new pass is not.
func TestRegressions(t *testing.T) {
	t.Parallel()
	base := Baseline{Passed: 2, Tasks: []string{"a", "b"}}
	rep := Report{Passed: 2, Total: 3, Results: []Result{{ID: "a", Passed: true}, {ID: "b", Failures: []string{"x not called"}}, {ID: "c", Passed: true}}}
	got := Regressions(base, rep)
	if len(got) != 1 || !strings.Contains(got[0], "task b") {
		t.Errorf("regressions %q, want task b", got)
	}
	rep.Results[2].Passed, rep.Passed = false, 1
	if got := Regressions(base, rep); len(got) != 2 {
		t.Errorf("regressions %q, want the count and task b", got)
	}
}

// TestLoadRejectsBadTasks: an unknown class or a repeated id is an error naming the file.
func TestLoadRejectsBadTasks(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"class":   `[{"id":"a","class":"poetry","message":"hi"}]`,
		"repeat":  `[{"id":"a","class":"tasks","message":"hi"},{"id":"a","class":"tasks","message":"ho"}]`,
		"unknown": `[{"id":"a","class":"tasks","message":"hi","expect":{"calld":["x"]}}]`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "t.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "t.json") {
			t.Errorf("%s: err = %v, want an error naming t.json", name, err)
		}
	}
}

// TestModelConfig: replay when the fixture file exists, the configured model when not, and
// --record only with a key.
func TestModelConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := ModelConfig(config.Config{}, dir, false)
	if err != nil || c.ModelFixtures != "" {
		t.Fatalf("no fixtures: %+v %v, want the configured model", c, err)
	}
	if _, err := ModelConfig(config.Config{}, dir, true); err == nil {
		t.Fatal("--record without a key was accepted")
	}
	c, err = ModelConfig(config.Config{GeminiAPIKey: "k"}, dir, true)
	if err != nil || c.ModelFixturesMode != "record" || c.ModelFixtures != filepath.Join(dir, FixtureFile) {
		t.Fatalf("record: %+v %v", c, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FixtureFile), []byte(`{"version":1,"calls":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = ModelConfig(config.Config{}, dir, false)
	if err != nil || !c.Replaying() {
		t.Fatalf("fixtures present: %+v %v, want replay", c, err)
	}
}

// TestEvalsDocMatchesBaseline: docs/EVALS.md states the suite's size and the demo model's
// pass counts per class as evals/baseline.json and evals/*.json have them.
func TestEvalsDocMatchesBaseline(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/EVALS.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	tasks, err := Load("../../evals")
	if err != nil {
		t.Fatal(err)
	}
	base, err := ReadBaseline("../../evals/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]int{}
	for _, task := range tasks {
		totals[task.Class]++
	}
	want := []string{fmt.Sprintf("%d tasks", len(tasks)), fmt.Sprintf("passes %d of %d", base.Passed, len(tasks))}
	for class, n := range totals {
		want = append(want, fmt.Sprintf("%s %d/%d", class, base.Classes[class], n))
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("docs/EVALS.md does not say %q", w)
		}
	}
}
