package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/trace"
)

// internalMessage is all a client learns of an internal error.
const internalMessage = "internal error; the request id identifies it in the server log"

// httpError is an error response decided by this package, with a status that may differ
// from the code's usual one (400 for a malformed body, 415, 405).
type httpError struct {
	status  int
	code    steward.Code
	message string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

// errorf builds an httpError.
func errorf(status int, code steward.Code, format string, a ...any) *httpError {
	return &httpError{status: status, code: code, message: fmt.Sprintf(format, a...)}
}

// errorBody is the JSON of every error response.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code steward.Code `json:"code"`
	// Reason is machine-readable for refusals: owner_quota, daily_cap, killed.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message"`
}

// classify turns any error into what the client sees: a status (steward.HTTPStatusOf, the one
// table of docs/ARCHITECTURE.md §4), a code and a message with no internal detail.
func classify(err error) (int, errorDetail) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, errorDetail{Code: he.code, Message: he.message}
	}
	code, status := steward.ErrorCode(err), steward.HTTPStatusOf(err)
	if status == http.StatusInternalServerError {
		code = steward.CodeInternal
	}
	var ae *steward.Error
	switch {
	case code == steward.CodeInternal:
		return status, errorDetail{Code: code, Message: internalMessage}
	case errors.As(err, &ae):
		return status, errorDetail{Code: code, Reason: ae.Reason, Message: ae.Message}
	case code == steward.CodeNotFound:
		return status, errorDetail{Code: code, Message: "not found"}
	case code == steward.CodeConflict:
		return status, errorDetail{Code: code, Message: "the object changed or is in a state that does not allow this; reload it and retry"}
	}
	return status, errorDetail{Code: code, Message: string(code)}
}

// fail writes err as an error response. Internal errors are logged with their detail; the
// client gets a generic message.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	status, detail := classify(err)
	if s := steward.RetrySeconds(err); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
	log := zerolog.Ctx(r.Context())
	if status >= 500 {
		log.Error().Str("error", trace.Redact(err.Error())).Int("status", status).Msg("request failed")
	} else {
		log.Debug().Err(err).Int("status", status).Str("code", string(detail.Code)).Msg("request refused")
	}
	writeJSON(w, status, errorBody{Error: detail})
}

// writeJSON writes v as the JSON response body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: errorDetail{Code: steward.CodeInternal, Message: internalMessage}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck // the client went away; nothing to do
}

// decode reads the request body as exactly one JSON object into dst. Every failure is a
// 400 invalid (empty body, not JSON, not an object, an unknown field, a wrong JSON type,
// trailing data), except a body over the limit, which is 413 too_large.
func decode(r *http.Request, dst any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorf(http.StatusRequestEntityTooLarge, steward.CodeTooLarge, "request body is larger than %d bytes", tooBig.Limit)
		}
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "could not read the request body")
	}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "request body is empty; send a JSON object")
	case b[0] != '{':
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "malformed JSON body: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, steward.CodeInvalid, "malformed JSON body: data after the JSON object")
	}
	return nil
}

// jsonProblem describes a decoding error in terms of the client's own input.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(syntax.Error(), "json: "), syntax.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("field %q must be a JSON %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of JSON"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map", "ptr":
		return "object"
	}
	if strings.HasPrefix(kind, "int") || strings.HasPrefix(kind, "uint") || strings.HasPrefix(kind, "float") {
		return "number"
	}
	return "value"
}
