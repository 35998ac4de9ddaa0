// Package geminifake is a fake of the Gemini REST API (generateContent,
// streamGenerateContent?alt=sse and batchEmbedContents) for tests and the cycle benchmark
// (cmd/benchcycle), so that Steward runs the real genai SDK without the network. It answers
// by looking at the request, the way a model would in the approval cycle:
//
//   - a request that declares record_facts (memory extraction) gets record_facts with no facts;
//   - a request whose last content is not a function response (a new message, in a new
//     conversation or one that goes on) gets a create_task call for "buy milk";
//   - a request whose last content carries a function response gets a short text answer;
//   - batchEmbedContents gets one unit vector of the asked dimension per text.
//
// It records every generateContent request and counts embedding requests.
package geminifake

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ThoughtSignature is the opaque signature the fake puts on its function call; Gemini
// requires it back, byte for byte, on the same part of the next request.
var ThoughtSignature = []byte("sig:\x00\xffcross-process")

// Usage of the fake's answers, in tokens: the call, then the answer after the tool result.
const (
	CallInputTokens   = 100
	AnswerInputTokens = 150
)

// Server is the fake; it is an http.Handler (serve it with httptest.NewServer or net/http).
type Server struct {
	// Forget keeps no request, only their count (Generates): for a long run
	// (internal/benchload), whose requests would fill memory. Set it before serving.
	Forget bool

	mu        sync.Mutex
	requests  []Request
	generates int
	embeds    int
	errs      []error
}

// New returns an empty fake.
func New() *Server { return &Server{} }

// Request is the part of a generateContent request the fake and its users read.
type Request struct {
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
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// HasFunctionResponse reports whether the request carries a tool result.
func (r Request) HasFunctionResponse() bool {
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				return true
			}
		}
	}
	return false
}

// answersCall reports whether the request's last content carries a function response: the
// model is to answer the tool's result (earlier turns of a conversation may hold others).
func (r Request) answersCall() bool {
	if len(r.Contents) == 0 {
		return false
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// declares reports whether the request declares the function name.
func (r Request) declares(name string) bool {
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == name {
				return true
			}
		}
	}
	return false
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(fmt.Errorf("fake gemini: read %s: %w", r.URL.Path, err))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if strings.HasSuffix(r.URL.Path, ":batchEmbedContents") {
		s.embed(w, raw)
		return
	}
	req := Request{Path: r.URL.Path}
	if err := json.Unmarshal(raw, &req); err != nil {
		s.fail(fmt.Errorf("fake gemini: decode %s: %w", r.URL.Path, err))
	}
	s.mu.Lock()
	s.generates++
	if !s.Forget {
		s.requests = append(s.requests, req)
	}
	s.mu.Unlock()

	var body string
	switch {
	case req.declares("record_facts"):
		body = `{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"record_facts","args":{"facts":[]}}}]},
			"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":5,"totalTokenCount":55}}`
	case !req.answersCall():
		sig, _ := json.Marshal(ThoughtSignature)
		body = fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"create_task","args":{"title":"buy milk"}},"thoughtSignature":%s}]},
			"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":10,"totalTokenCount":%d}}`,
			sig, CallInputTokens, CallInputTokens+10)
	default:
		body = fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Added \"buy milk\" to your tasks."}]},
			"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":%d,"candidatesTokenCount":8,"totalTokenCount":%d}}`,
			AnswerInputTokens, AnswerInputTokens+8)
	}
	body = strings.Join(strings.Fields(body), " ")
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body) //nolint:errcheck // the client reports a short body
}

// Requests returns the generateContent requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Generates returns how many generateContent requests the fake answered.
func (s *Server) Generates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generates
}

// Embeds returns how many batchEmbedContents requests the fake answered.
func (s *Server) Embeds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embeds
}

// Err returns every request the fake could not read, joined; nil when there was none.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

// embed answers a batchEmbedContents request: a unit vector of the asked dimension per text.
func (s *Server) embed(w http.ResponseWriter, raw []byte) {
	var req struct {
		Requests []struct {
			OutputDimensionality int `json:"outputDimensionality"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		s.fail(fmt.Errorf("fake gemini: decode batchEmbedContents: %w", err))
	}
	s.mu.Lock()
	s.embeds++
	s.mu.Unlock()
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
