// Package customresource answers AWS CloudFormation's custom resource requests for a
// Lambda-backed custom resource (docs/ARCHITECTURE.md §14): CloudFormation invokes the
// function with a Request and then waits — up to the resource's ServiceTimeout, an hour by
// default — for a Response PUT to the request's ResponseURL (a presigned S3 URL). Handle
// answers on every path: the work's success, its error, a panic, and the work still running
// as the invocation's deadline nears.
package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Request types.
const (
	Create = "Create"
	Update = "Update"
	Delete = "Delete"
)

// Request is what CloudFormation sends for one custom resource operation.
type Request struct {
	RequestType           string         `json:"RequestType"`
	ResponseURL           string         `json:"ResponseURL"`
	StackID               string         `json:"StackId"`
	RequestID             string         `json:"RequestId"`
	ResourceType          string         `json:"ResourceType"`
	LogicalResourceID     string         `json:"LogicalResourceId"`
	PhysicalResourceID    string         `json:"PhysicalResourceId,omitempty"`
	ResourceProperties    map[string]any `json:"ResourceProperties,omitempty"`
	OldResourceProperties map[string]any `json:"OldResourceProperties,omitempty"`
}

// Property is the string property name of the request's ResourceProperties (old: of
// OldResourceProperties), "" when it is missing or not a string.
func (r Request) Property(name string, old bool) string {
	props := r.ResourceProperties
	if old {
		props = r.OldResourceProperties
	}
	s, _ := props[name].(string)
	return s
}

// Response is the answer CloudFormation waits for.
type Response struct {
	Status             string            `json:"Status"` // SUCCESS or FAILED
	Reason             string            `json:"Reason,omitempty"`
	PhysicalResourceID string            `json:"PhysicalResourceId"`
	StackID            string            `json:"StackId"`
	RequestID          string            `json:"RequestId"`
	LogicalResourceID  string            `json:"LogicalResourceId"`
	Data               map[string]string `json:"Data,omitempty"`
}

// Work is one request's work. It returns the resource's physical id ("" keeps the request's,
// or for a Create the logical id) or an error whose message is the reason CloudFormation
// shows, one line naming the problem.
type Work func(ctx context.Context, req Request) (physicalID string, err error)

// Margin is how long before the invocation's deadline Handle gives up on the work and
// answers FAILED: time for the answer's PUT and its retries.
const Margin = MarginSeconds * time.Second

// MarginSeconds is Margin in seconds.
const MarginSeconds = 10

// maxReason bounds the reason: CloudFormation takes a response of at most 4 KB.
const maxReason = 1500

// Handle runs work for req and answers CloudFormation at req.ResponseURL whatever happens:
// SUCCESS; FAILED with the work's error as one line; FAILED when the work panicked; FAILED
// when it is still running Margin before ctx's deadline (the Lambda invocation's), naming the
// last step it reported (Step). It returns an error only when no answer could be sent, so
// that Lambda retries the invocation.
func Handle(ctx context.Context, client *http.Client, req Request, work Work) error {
	if req.ResponseURL == "" || !(strings.HasPrefix(req.ResponseURL, "https://") || strings.HasPrefix(req.ResponseURL, "http://")) {
		return errors.New("a custom resource request without a ResponseURL: nobody to answer")
	}
	workCtx, cancel := context.WithCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		workCtx, cancel = context.WithDeadline(ctx, deadline.Add(-Margin))
	}
	defer cancel()
	started := time.Now()
	s := &steps{}
	type result struct {
		id  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("the function failed unexpectedly while %s: %v", s.current(), p)}
			}
		}()
		id, err := work(context.WithValue(workCtx, stepsKey{}, s), req)
		done <- result{id, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-workCtx.Done():
	}
	if workCtx.Err() != nil && ctx.Err() == nil && (r.err != nil || r == (result{})) {
		r = result{err: fmt.Errorf("timed out after %s while %s (answered before the function's own timeout; its log has more)",
			time.Since(started).Round(time.Second), s.current())}
	}
	resp := Response{Status: "SUCCESS", PhysicalResourceID: r.id, StackID: req.StackID, RequestID: req.RequestID, LogicalResourceID: req.LogicalResourceID}
	if resp.PhysicalResourceID == "" {
		resp.PhysicalResourceID = req.PhysicalResourceID
	}
	if resp.PhysicalResourceID == "" {
		resp.PhysicalResourceID = req.LogicalResourceID
	}
	if r.err != nil {
		resp.Status, resp.Reason = "FAILED", OneLine(r.err.Error())
	}
	return Respond(ctx, client, req.ResponseURL, resp)
}

// OneLine is msg on one line (errors.Join's lines joined with "; "), at most maxReason bytes.
func OneLine(msg string) string {
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", " ; ")), " ")
	msg = strings.ReplaceAll(msg, " ; ", "; ")
	if len(msg) > maxReason {
		msg = strings.ToValidUTF8(msg[:maxReason], "") + "…"
	}
	return msg
}

// Respond PUTs resp to url (without a Content-Type: the presigned URL was signed without
// one), trying three times.
func Respond(ctx context.Context, client *http.Client, url string, resp Response) error {
	body, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("answer CloudFormation: %w (then %w)", last, ctx.Err())
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPut, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		res, err := client.Do(req)
		if err != nil {
			last = err
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		if res.StatusCode/100 == 2 {
			return nil
		}
		last = fmt.Errorf("the response URL answered %s", res.Status)
	}
	return fmt.Errorf("answer CloudFormation: %w", last)
}

// steps is the work's last reported step.
type steps struct {
	mu   sync.Mutex
	step string
}

func (s *steps) current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.step == "" {
		return "starting"
	}
	return s.step
}

type stepsKey struct{}

// Step records what the work under ctx is doing now ("connecting to the database at …"), for
// the reason Handle gives when the work runs out of time.
func Step(ctx context.Context, what string) {
	if s, ok := ctx.Value(stepsKey{}).(*steps); ok {
		s.mu.Lock()
		s.step = what
		s.mu.Unlock()
	}
}
