package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/eval"
)

// countTokensFake is the Gemini REST API's countTokens (POST /v1beta/models/{model}:countTokens
// → {"totalTokens": N}) with a deterministic count derived from the request's length; it keeps
// the counts it served, in order.
type countTokensFake struct {
	srv    *httptest.Server
	mu     sync.Mutex
	counts []int
	keys   []string
}

var countPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):countTokens$`)

func newCountTokensFake(t *testing.T) *countTokensFake {
	f := &countTokensFake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Contents []json.RawMessage `json:"contents"`
		}
		if r.Method != http.MethodPost || !countPath.MatchString(r.URL.Path) || json.Unmarshal(body, &req) != nil || len(req.Contents) == 0 {
			t.Errorf("countTokens fake: unexpected %s %s %s", r.Method, r.URL.Path, body)
			http.Error(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		n := len(body)/3 + 7*len(req.Contents)
		f.mu.Lock()
		f.counts = append(f.counts, n)
		f.keys = append(f.keys, r.Header.Get("x-goog-api-key"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens": %d}`, n)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// evalDir is a copy of the repository's eval tasks in a temporary directory.
func evalDir(t *testing.T) string {
	dir := t.TempDir()
	files, _ := filepath.Glob("../../evals/*.json")
	if len(files) < 5 {
		t.Fatalf("found %d eval files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestEvalCalibrate: without recorded counts and without a key, calibration fails and prints
// no figures; --record asks the countTokens fake and records; with the fake stopped, the replay
// gives the same table and report byte for byte, and the error per class is the one computed
// here from the counts the fake served; the suggested rates load through STEWARD_TOKEN_RATES.
func TestEvalCalibrate(t *testing.T) {
	t.Parallel()
	dir := evalDir(t)
	fixtures := filepath.Join(dir, eval.CountFixtureFile)
	outs := t.TempDir()

	r := runCLI(t, nil, "eval", "--calibrate", "--dir", dir)
	wantOneLineError(t, r, "calibration needs one recorded run")
	if r.stdout != "" {
		t.Errorf("an uncalibrated run printed figures: %s", r.stdout)
	}
	r = runCLI(t, nil, "eval", "--calibrate", "--record", "--dir", dir)
	wantOneLineError(t, r, "needs GEMINI_API_KEY")

	fake := newCountTokensFake(t)
	recorded := filepath.Join(outs, "recorded.json")
	env := map[string]string{"GEMINI_API_KEY": "AIza-real-key", "GEMINI_BASE_URL": fake.srv.URL}
	r = runCLI(t, env, "eval", "--calibrate", "--record", "--dir", dir, "--json", recorded)
	wantOK(t, r)
	fileAfterRecord, err := os.ReadFile(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(fileAfterRecord), "AIza-real-key") {
		t.Error("the fixture file holds the API key")
	}
	for _, k := range fake.keys {
		if k != "AIza-real-key" {
			t.Fatalf("the fake got key %q", k)
		}
	}

	// The error per class, computed here from the fake's counts and the default rates.
	tasks, err := eval.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	samples := eval.CalibrationSet(tasks)
	if len(fake.counts) != len(samples) {
		t.Fatalf("the fake counted %d requests, the set has %d samples", len(fake.counts), len(samples))
	}
	type agg struct {
		sum, max float64
		n        int
	}
	want := map[string]*agg{"prose": {}, "json": {}}
	for i, s := range samples {
		est := 0
		for _, m := range s.Messages {
			est += agent.DefaultRates.Message(m)
		}
		e := 100 * math.Abs(float64(est-fake.counts[i])) / float64(fake.counts[i])
		a := want[s.Class]
		a.sum, a.n, a.max = a.sum+e, a.n+1, math.Max(a.max, e)
	}
	var rep eval.Calibration
	raw, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Classes) != 2 {
		t.Fatalf("report classes %+v", rep.Classes)
	}
	for _, c := range rep.Classes {
		w := want[c.Class]
		if c.Samples != w.n || w.n < 5 || math.Abs(c.MAEPct-w.sum/float64(w.n)) > 1e-9 || math.Abs(c.MaxPct-w.max) > 1e-9 {
			t.Errorf("class %s: report %+v; computed here n=%d MAE=%v max=%v", c.Class, c, w.n, w.sum/float64(w.n), w.max)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("%-6s %7d %8.1f %8.1f", c.Class, c.Samples, c.MAEPct, c.MaxPct)) {
			t.Errorf("the table lacks class %s:\n%s", c.Class, r.stdout)
		}
	}

	// Replay: the fake is gone and no key is set; same table, same report, file untouched.
	fake.srv.Close()
	replayed := filepath.Join(outs, "replayed.json")
	r2 := runCLI(t, map[string]string{"GEMINI_BASE_URL": fake.srv.URL}, "eval", "--calibrate", "--dir", dir, "--json", replayed)
	wantOK(t, r2)
	raw2, err := os.ReadFile(replayed)
	if err != nil {
		t.Fatal(err)
	}
	if r2.stdout != r.stdout || string(raw2) != string(raw) {
		t.Errorf("the replay differs from the recording:\n%s\n---\n%s", r.stdout, r2.stdout)
	}
	if after, _ := os.ReadFile(fixtures); string(after) != string(fileAfterRecord) {
		t.Error("the replay changed the fixture file")
	}

	// The suggested rates load: a replay under them reports the error they were said to give.
	rates := fmt.Sprintf("%g:%g", rep.SuggestedRates.ProseChars, rep.SuggestedRates.JSONChars)
	if !strings.Contains(r.stdout, "STEWARD_TOKEN_RATES="+rates) {
		t.Errorf("stdout does not suggest STEWARD_TOKEN_RATES=%s:\n%s", rates, r.stdout)
	}
	tuned := filepath.Join(outs, "tuned.json")
	wantOK(t, runCLI(t, map[string]string{"STEWARD_TOKEN_RATES": rates}, "eval", "--calibrate", "--dir", dir, "--json", tuned))
	var rep3 eval.Calibration
	raw3, _ := os.ReadFile(tuned)
	if err := json.Unmarshal(raw3, &rep3); err != nil {
		t.Fatal(err)
	}
	for i, c := range rep3.Classes {
		if rep3.Rates.ProseChars != rep.SuggestedRates.ProseChars || math.Abs(c.MAEPct-rep.Classes[i].Suggest) > 1e-9 {
			t.Errorf("under %s, class %s MAE %v; the recording said %v", rates, c.Class, c.MAEPct, rep.Classes[i].Suggest)
		}
	}

	// A calibration set the file does not hold (a task added) fails, saying to record again.
	extra := `[{"id": "calibration-extra", "class": "tasks", "message": "One more sample the file has not seen."}]`
	if err := os.WriteFile(filepath.Join(dir, "zz-extra.json"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "eval", "--calibrate", "--dir", dir)
	wantOneLineError(t, r, "record it again")
	if r.stdout != "" {
		t.Errorf("a partial calibration printed figures: %s", r.stdout)
	}
}
