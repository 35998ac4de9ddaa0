package openaiapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// InOpenAIShape wraps middleware that answers errors in Steward's own shape
// ({"error":{"code","message"}}: the mounting router's bearer-key auth) so that its errors
// reach the client in OpenAI's shape, with the same status and headers (WWW-Authenticate).
// A 401 gets code invalid_api_key, as OpenAI's clients expect. Answers that already carry an
// OpenAI error type, and every success, pass through untouched.
func InOpenAIShape(mw func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		inner := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &shapeWriter{ResponseWriter: w}
			inner.ServeHTTP(sw, r)
			if sw.status < 400 {
				return
			}
			var in struct {
				Error struct {
					Code    string  `json:"code"`
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
				} `json:"error"`
			}
			out := sw.buf.Bytes()
			if err := json.Unmarshal(out, &in); err == nil && in.Error.Type == "" {
				d := errorDetail{Message: in.Error.Message, Type: typeOf(sw.status), Code: in.Error.Code}
				if sw.status == http.StatusUnauthorized {
					d.Code = "invalid_api_key"
				}
				out, _ = json.Marshal(errorBody{Error: d})
				out = append(out, '\n')
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
			w.WriteHeader(sw.status)
			w.Write(out) //nolint:errcheck // the client went away; nothing to do
		})
	}
}

// shapeWriter holds back an error response so InOpenAIShape can rewrite it; anything else
// goes straight through (and flushes, for streams).
type shapeWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (s *shapeWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	if status < 400 {
		s.ResponseWriter.WriteHeader(status)
	}
}

func (s *shapeWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if s.status >= 400 {
		return s.buf.Write(b)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (flush, deadlines).
func (s *shapeWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
