package eval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/steward"
)

// TestCalibrationSet: the set is the same on every build (the fixtures are keyed by it), holds
// both classes with long samples, and a sample is JSON exactly when it carries tool parts.
func TestCalibrationSet(t *testing.T) {
	t.Parallel()
	tasks, err := Load("../../evals")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(CalibrationSet(tasks))
	b, _ := json.Marshal(CalibrationSet(tasks))
	if string(a) != string(b) {
		t.Fatal("the calibration set differs between two builds")
	}
	n, longest := map[string]int{}, map[string]int{}
	for _, s := range CalibrationSet(tasks) {
		tools := false
		for _, m := range s.Messages {
			for _, p := range m.Parts {
				tools = tools || p.ToolCall != nil || p.ToolResult != nil
			}
		}
		if tools != (s.Class == ClassJSON) {
			t.Errorf("sample %s: class %s, tool parts %v", s.ID, s.Class, tools)
		}
		pr, js, _ := measure(agent.DefaultRates, s.Messages)
		n[s.Class]++
		longest[s.Class] = max(longest[s.Class], pr+js)
	}
	if n[ClassProse] < len(tasks) || n[ClassJSON] < 10 || longest[ClassProse] < 5000 || longest[ClassJSON] < 5000 {
		t.Errorf("samples %v, longest %v", n, longest)
	}
}

type failingCounter struct{ after, calls int }

func (f *failingCounter) CountTokens(context.Context, []steward.Message) (int, error) {
	if f.calls++; f.calls > f.after {
		return 0, errors.New("count failed")
	}
	return 10, nil
}

// TestCalibrateNeverInvents: one failed count fails the calibration, which then reports no
// class; no recorded counts and no key is ErrNotCalibrated.
func TestCalibrateNeverInvents(t *testing.T) {
	t.Parallel()
	tasks, _ := Load("../../evals")
	cal, err := Calibrate(context.Background(), &failingCounter{after: 3}, agent.DefaultRates, CalibrationSet(tasks))
	if err == nil || len(cal.Classes) != 0 {
		t.Fatalf("%+v, %v", cal.Classes, err)
	}
	if _, _, err := CountCounter(context.Background(), config.Config{}, t.TempDir(), false); !errors.Is(err, ErrNotCalibrated) || !strings.Contains(err.Error(), "--calibrate --record") {
		t.Fatalf("no fixtures: %v", err)
	}
}
