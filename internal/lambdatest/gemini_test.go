package lambdatest

import (
	"net/http/httptest"
	"testing"

	"github.com/stewardhq/steward/internal/llm/gemini/geminifake"
)

// fakeGemini is the fake Gemini REST API (internal/llm/gemini/geminifake) on a test server,
// so the functions run the real genai SDK: create_task first, a text answer after the tool
// result.
type fakeGemini struct {
	*geminifake.Server
	srv *httptest.Server
}

func newFakeGemini(t *testing.T) *fakeGemini {
	f := &fakeGemini{Server: geminifake.New()}
	f.srv = httptest.NewServer(f.Server)
	t.Cleanup(func() {
		f.srv.Close()
		if err := f.Err(); err != nil {
			t.Error(err)
		}
	})
	return f
}
