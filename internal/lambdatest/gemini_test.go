package lambdatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// thoughtSignature is the opaque signature the fake puts on its function call; Gemini
// requires it back, byte for byte, on the same part of the next request — here, from a
// different process than the one that received it.
var thoughtSignature = []byte("sig:\x00\xffcross-process")

// fakeGemini is an httptest fake of the Gemini REST API (generateContent and
// streamGenerateContent?alt=sse), so the functions run the real genai SDK. It answers by
// looking at the request: no function response yet → call create_task; otherwise → a text
// answer. It records every such request. Memory recall's batchEmbedContents requests get
// one unit vector per text, and are only counted.
type fakeGemini struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	requests []geminiRequest
	embeds   int
}

// geminiRequest is the part of a generateContent request the test reads.
type geminiRequest struct {
	Path     string
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			ThoughtSignature []byte `json:"thoughtSignature"`
			FunctionCall     *struct {
				ID   string         `json:"id"`
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string         `json:"id"`
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
}

// hasFunctionResponse reports whether the request carries a tool result.
func (r geminiRequest) hasFunctionResponse() bool {
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				return true
			}
		}
	}
	return false
}

func newFakeGemini(t *testing.T) *fakeGemini {
	f := &fakeGemini{t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, ":batchEmbedContents") {
		f.embed(w, raw)
		return
	}
	req := geminiRequest{Path: r.URL.Path}
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("fake gemini: decode %s: %v", r.URL.Path, err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()

	var body string
	if !req.hasFunctionResponse() {
		sig, _ := json.Marshal(thoughtSignature)
		body = fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"create_task","args":{"title":"buy milk"}},"thoughtSignature":%s}]},
			"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":10,"totalTokenCount":110}}`, sig)
	} else {
		body = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Added \"buy milk\" to your tasks."}]},
			"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":150,"candidatesTokenCount":8,"totalTokenCount":158}}`
	}
	body = strings.Join(strings.Fields(body), " ")
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// received returns the requests so far.
func (f *fakeGemini) received() []geminiRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]geminiRequest(nil), f.requests...)
}

// embed answers a batchEmbedContents request: a unit vector of the asked dimension per text.
func (f *fakeGemini) embed(w http.ResponseWriter, raw []byte) {
	var req struct {
		Requests []struct {
			OutputDimensionality int `json:"outputDimensionality"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("fake gemini: decode batchEmbedContents: %v", err)
	}
	f.mu.Lock()
	f.embeds++
	f.mu.Unlock()
	var resp struct {
		Embeddings []map[string][]float32 `json:"embeddings"`
	}
	for _, rq := range req.Requests {
		v := make([]float32, max(rq.OutputDimensionality, 1))
		v[0] = 1
		resp.Embeddings = append(resp.Embeddings, map[string][]float32{"values": v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp) //nolint:errcheck // the client reports a short body
}
