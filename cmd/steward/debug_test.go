package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestDebugServerServesAllocations: with STEWARD_DEBUG_ADDR set, GET /debug/vars there is the
// process's expvar JSON, whose memstats.Mallocs the cycle benchmark reads; nothing else is served.
func TestDebugServerServesAllocations(t *testing.T) {
	t.Parallel()
	srv, err := debugServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, err := debugServer("no-port"); err == nil {
		t.Errorf("debugServer(\"no-port\"): want a listen error")
	}
	base := "http://" + srv.Addr
	resp, err := http.Get(base + "/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vars struct {
		Memstats struct{ Mallocs uint64 } `json:"memstats"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&vars) != nil || vars.Memstats.Mallocs == 0 {
		t.Fatalf("GET /debug/vars: %d, memstats.Mallocs %d; want 200 and a count", resp.StatusCode, vars.Memstats.Mallocs)
	}
	other, err := http.Get(base + "/v1/chat")
	if err != nil {
		t.Fatal(err)
	}
	other.Body.Close()
	if other.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/chat on the debug address: %d, want 404", other.StatusCode)
	}
}
