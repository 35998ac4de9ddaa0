package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stewardhq/steward/internal/config"
)

// FixtureFile is where the suite's recorded model calls live, under the tasks' directory.
const FixtureFile = "fixtures/model.json"

// ModelConfig picks the suite's model in cfg: with record, the configured real model with its
// calls recorded to STEWARD_MODEL_FIXTURES (dir's FixtureFile when unset), which needs a key;
// else the fixtures replayed when STEWARD_MODEL_FIXTURES is set or dir's FixtureFile exists;
// else whatever cfg chose (the offline demo model without a key).
func ModelConfig(cfg config.Config, dir string, record bool) (config.Config, error) {
	if cfg.ModelFixtures == "" {
		cfg.ModelFixtures = filepath.Join(dir, FixtureFile)
		if _, err := os.Stat(cfg.ModelFixtures); err != nil && !record {
			cfg.ModelFixtures = ""
			return cfg, nil
		}
	}
	if !record {
		cfg.ModelFixturesMode = "replay"
		return cfg, nil
	}
	if cfg.GeminiAPIKey == "" && cfg.GeminiAPIKeyParam == "" && cfg.OpenAIAPIKey == "" && cfg.OpenAIBaseURL == "" {
		return cfg, errors.New("--record needs a real model: set GEMINI_API_KEY (or STEWARD_MODELS with OPENAI_API_KEY)")
	}
	cfg.ModelFixturesMode = "record"
	return cfg, nil
}

// WriteJSON writes the report to path.
func (rep Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Baseline is the recorded pass count the CI gate holds a model to (evals/baseline.json).
type Baseline struct {
	Model   string         `json:"model"`
	Passed  int            `json:"passed"`
	Total   int            `json:"total"`
	Classes map[string]int `json:"classes"`
	// Tasks lists the tasks that passed, so a regression names the task.
	Tasks []string `json:"tasks"`
}

// Write writes the baseline file.
func (b Baseline) Write(path string) error {
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// ReadBaseline reads a baseline file.
func ReadBaseline(path string) (Baseline, error) {
	var b Baseline
	raw, err := os.ReadFile(path)
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// BaselineOf is the baseline a report sets.
func BaselineOf(rep Report) Baseline {
	b := Baseline{Model: rep.Model, Passed: rep.Passed, Total: rep.Total, Classes: map[string]int{}}
	for _, c := range rep.Classes {
		b.Classes[c.Class] = c.Passed
	}
	for _, r := range rep.Results {
		if r.Passed {
			b.Tasks = append(b.Tasks, r.ID)
		}
	}
	return b
}

// Regressions lists what rep lost against b: the total pass count dropping, and each task
// that passed in b and fails now.
func Regressions(b Baseline, rep Report) []string {
	var out []string
	if rep.Passed < b.Passed {
		out = append(out, fmt.Sprintf("%d/%d tasks passed, the baseline is %d", rep.Passed, rep.Total, b.Passed))
	}
	failed := map[string]Result{}
	for _, r := range rep.Results {
		if !r.Passed {
			failed[r.ID] = r
		}
	}
	for _, id := range b.Tasks {
		if r, ok := failed[id]; ok {
			out = append(out, fmt.Sprintf("task %s passed in the baseline and fails now: %v", id, r.Failures))
		}
	}
	return out
}
