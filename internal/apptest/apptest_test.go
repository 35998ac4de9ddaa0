package apptest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

// TestNewServesProductionsGraph: the handler is production's, every face on — the API, the
// OpenAI face, the web app — over the test's model, and its services are the ones App holds.
func TestNewServesProductionsGraph(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, apptest.Options{Model: scripted.New(scripted.Reply(scripted.Text("Hello from the script.")))})
	_, key := e.DB.Owner(t, "ada")
	get := func(path, body string) (int, string) {
		t.Helper()
		method := http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
		req, _ := http.NewRequest(method, e.Server.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct{ path, body, want string }{
		{"/v1/chat", `{"message":"hi"}`, "Hello from the script."},
		{"/v1/control", "", `"mode"`},
		{"/v1/models", "", `"object":"list"`},
		{"/v1/household/approvals", "", `"approvals"`},
	} {
		if code, body := get(c.path, c.body); code != http.StatusOK || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want 200 with %s", c.path, code, body, c.want)
		}
	}
	resp, err := http.Get(e.Server.URL + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `name="api_key"`) {
		t.Fatalf("GET /signin: %d %s", resp.StatusCode, b)
	}
}
