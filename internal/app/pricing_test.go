package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/testdb"
)

// fakeGemini answers generateContent (and its stream) with one text answer that names
// modelVersion and bills usage, and batchEmbedContents with unit vectors (memory recall).
func fakeGemini(t *testing.T, modelVersion string, promptTokens, outputTokens int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, ":batchEmbedContents") {
			var req struct {
				Requests []struct {
					OutputDimensionality int `json:"outputDimensionality"`
				} `json:"requests"`
			}
			json.Unmarshal(raw, &req) //nolint:errcheck // an empty batch answers empty
			var resp struct {
				Embeddings []map[string][]float32 `json:"embeddings"`
			}
			for _, rq := range req.Requests {
				v := make([]float32, max(rq.OutputDimensionality, 1))
				v[0] = 1
				resp.Embeddings = append(resp.Embeddings, map[string][]float32{"values": v})
			}
			json.NewEncoder(w).Encode(resp) //nolint:errcheck // the client reports a short body
			return
		}
		body := fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Noted."}]},"finishReason":"STOP"}],`+
			`"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":%d,"totalTokenCount":%d},"modelVersion":%q}`,
			promptTokens, outputTokens, promptTokens+outputTokens, modelVersion)
		if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", body)
			return
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// chat posts one message as the owner with key and returns the status and the decoded body.
func chat(t *testing.T, h http.Handler, key, message string) (int, map[string]any) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat", strings.NewReader(fmt.Sprintf(`{"message":%q}`, message)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("POST /v1/chat = %d, undecodable body: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, body
}

// TestUnpricedResponseModelStillCountsAgainstBudgets: Gemini answers naming a model Steward has
// no price for (an alias resolved, a deprecated model routed to its replacement). The call is
// not free: it is counted at the configured model's price, so the owner's daily budget and
// the deployment's daily cap both trip.
func TestUnpricedResponseModelStillCountsAgainstBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	// 100k input and 10k output tokens: $0.1125 at gemini-3.8-flash's price until 2027.
	gem := fakeGemini(t, "gemini-9-unpriced", 100_000, 10_000)
	cfg := loadConfig(t, map[string]string{
		"DATABASE_URL": db.OwnerURL, "APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL,
		"GEMINI_API_KEY": "test-key", "GEMINI_BASE_URL": gem.URL, "STEWARD_MODEL": "gemini-3.8-flash",
	})
	a, err := build(ctx, cfg, settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	owner, key, err := adminDoor(t, &db).CreateOwner(ctx, "budget")
	if err != nil {
		t.Fatal(err)
	}
	if err := adminDoor(t, &db).SetDailyLimits(ctx, owner.ID, 100, 10_000); err != nil { // $0.01 a day
		t.Fatal(err)
	}
	status, body := chat(t, a.Handler(), key, "hello")
	if status != http.StatusOK || body["status"] != "completed" {
		t.Fatalf("first turn: %d %v", status, body)
	}
	if usage, _ := body["usage"].(map[string]any); usage == nil || usage["cost_usd"] == nil || usage["cost_usd"].(float64) <= 0 {
		t.Errorf("the first turn cost nothing: usage %v", body["usage"])
	}
	status, body = chat(t, a.Handler(), key, "hello again")
	if e, _ := body["error"].(map[string]any); status != http.StatusTooManyRequests || e["code"] != "over_budget" || e["reason"] != "owner_quota" {
		t.Fatalf("second turn over the owner's $0.01 budget: got %d %v, want 429 over_budget owner_quota", status, body)
	}

	// The deployment's cap: another owner with a fresh budget, the cap at $0.01, and a fresh
	// App (a new Lambda instance, with no cached figures) that sees today's spend.
	if err := adminDoor(t, &db).SetGlobalCostCap(ctx, 10_000); err != nil {
		t.Fatal(err)
	}
	b, err := build(ctx, cfg, settings{logOut: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, key2, err := adminDoor(t, &db).CreateOwner(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	status, body = chat(t, b.Handler(), key2, "hello")
	if e, _ := body["error"].(map[string]any); status != http.StatusServiceUnavailable || e["code"] != "over_budget" || e["reason"] != "daily_cap" {
		t.Fatalf("a turn over the deployment's $0.01 cap: got %d %v, want 503 over_budget daily_cap", status, body)
	}
}

// TestNewRefusesAnUnpricedModel: with Gemini, a turn model or background model without a
// price stops the start (steward serve and every Lambda build the App here), naming the
// model and how to price it; STEWARD_MODEL_PRICES lets it start.
func TestNewRefusesAnUnpricedModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	gem := fakeGemini(t, "", 1, 1)
	base := map[string]string{"DATABASE_URL": db.OwnerURL, "APP_DATABASE_URL": db.AppURL, "DOOR_DATABASE_URL": db.DoorURL, "GEMINI_API_KEY": "test-key", "GEMINI_BASE_URL": gem.URL}
	with := func(kv ...string) map[string]string {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string // substrings of the error; none: it starts
	}{
		"turn model":       {with("STEWARD_MODEL", "gemini-9-unpriced"), []string{"STEWARD_MODEL", "gemini-9-unpriced", "STEWARD_MODEL_PRICES=gemini-9-unpriced="}},
		"background model": {with("STEWARD_FAST_MODEL", "gemini-9-lite"), []string{"STEWARD_FAST_MODEL", "gemini-9-lite", "STEWARD_MODEL_PRICES"}},
		"priced by the operator": {with("STEWARD_MODEL", "gemini-9-unpriced", "STEWARD_FAST_MODEL", "gemini-9-lite",
			"STEWARD_MODEL_PRICES", "gemini-9-unpriced=2:10, gemini-9-lite=0.5:3:0.05"), nil},
		"the defaults": {base, nil},
		"unpriced OpenAI model in the chain": {with("STEWARD_MODELS", "gemini:gemini-3.8-flash,openai:gpt-9-unpriced", "OPENAI_API_KEY", "k"),
			[]string{"STEWARD_MODELS", "gpt-9-unpriced", "STEWARD_MODEL_PRICES=gpt-9-unpriced="}},
		"a priced chain": {with("STEWARD_MODELS", "gemini:gemini-3.8-flash,openai:gpt-5-mini", "OPENAI_API_KEY", "k"), nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, err := build(ctx, loadConfig(t, tc.env), settings{logOut: io.Discard})
			if err == nil {
				defer a.Close()
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("start refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("started with an unpriced model; want an error saying %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
