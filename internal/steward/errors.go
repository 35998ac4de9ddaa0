package steward

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an error for clients; HTTPStatus maps each code to an HTTP status.
type Code string

// Error codes (docs/ARCHITECTURE.md §4).
const (
	CodeInvalid      Code = "invalid"
	CodeUnauthorized Code = "unauthorized"
	CodeNotFound     Code = "not_found"
	CodeConflict     Code = "conflict"
	CodeTooLarge     Code = "too_large"
	CodeRateLimited  Code = "rate_limited"
	CodeOverBudget   Code = "over_budget"
	CodeKilled       Code = "killed"
	// CodeUnavailable: the database cannot be reached for now (a failover, a restart); the
	// request changed nothing and may be sent again after RetryAfter.
	CodeUnavailable Code = "unavailable"
	CodeInternal    Code = "internal"
)

// statuses is the one table from error codes to HTTP statuses (docs/ARCHITECTURE.md §4); every
// face answers with it (a face's own exceptions are declared overrides beside it, as the
// OpenAI face's 400 for invalid). A code without a row fails TestEveryCodeHasAStatus.
//
// The statuses are numbers: the leaf imports no net/http, which the agent loop may not reach
// (§1). invalid is 422: the request was well-formed but its values are unacceptable (an empty
// message, a missing decision); a body that is not a well-formed request at all is refused
// by the face with 400 before any code is involved.
var statuses = map[Code]int{
	CodeInvalid:      422, // Unprocessable Entity
	CodeUnauthorized: 401, // Unauthorized
	CodeNotFound:     404, // Not Found
	CodeConflict:     409, // Conflict
	CodeTooLarge:     413, // Content Too Large
	CodeRateLimited:  429, // Too Many Requests
	CodeOverBudget:   429, // Too Many Requests
	CodeKilled:       423, // Locked
	CodeUnavailable:  503, // Service Unavailable
	CodeInternal:     500, // Internal Server Error
}

// HTTPStatus is the HTTP status of code; an unknown code is 500, as internal.
func HTTPStatus(code Code) int {
	if s, ok := statuses[code]; ok {
		return s
	}
	return 500
}

// HTTPStatusOf is the HTTP status of err: its code's (ErrorCode), except that a refusal by
// the deployment-wide daily cap is 503 — the deployment, not the owner, is out of budget.
func HTTPStatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Reason == ReasonDailyCap {
		return 503
	}
	return HTTPStatus(ErrorCode(err))
}

// Sentinel errors shared with the store, matched with errors.Is.
var (
	// ErrNotFound: no such object for this owner; another owner's objects are never found.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the object is not in a state that allows the change (a lost race, a
	// resolved turn, a stale version).
	ErrConflict = errors.New("conflict")
	// ErrNotCommitted marks an unavailable error of a transaction that certainly did not
	// commit: its connection was lost before its COMMIT reached the server. Run once more on
	// a fresh connection, it changes nothing twice (docs/ARCHITECTURE.md §6).
	ErrNotCommitted = errors.New("the transaction did not commit")
)

// Error is an error a client may see: a code and a message written for the client.
type Error struct {
	Code Code
	// Reason is a machine-readable refusal reason: owner_quota, daily_cap, killed.
	Reason  string
	Message string
	// RetryAfter, when set, is how long the client should wait before trying again (the
	// HTTP faces send it as Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds a client-visible error.
func Errorf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// Refusal reasons carried by budget and kill-switch refusals.
const (
	ReasonOwnerQuota = "owner_quota"
	ReasonDailyCap   = "daily_cap"
	ReasonKilled     = "killed"
)

// Refusef builds a refusal with a machine-readable reason.
func Refusef(code Code, reason, format string, a ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, a...)}
}

// ErrorCode classifies any error: an *Error's own code, the sentinels' codes, else internal.
func ErrorCode(err error) Code {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrConflict):
		return CodeConflict
	}
	return CodeInternal
}

// RetrySeconds is how many whole seconds (rounded up) an error says to wait before trying
// again (its RetryAfter); 0 when it says nothing. The HTTP faces send it as Retry-After.
func RetrySeconds(err error) int {
	var se *Error
	if !errors.As(err, &se) || se.RetryAfter <= 0 {
		return 0
	}
	return int((se.RetryAfter + time.Second - 1) / time.Second)
}

// Words is the message of err that a person may read: an *Error's own, unless it is internal
// (whose message may name what only the operator should see). ok is false otherwise.
func Words(err error) (msg string, ok bool) {
	var se *Error
	if errors.As(err, &se) && se.Code != CodeInternal {
		return se.Message, true
	}
	return "", false
}
