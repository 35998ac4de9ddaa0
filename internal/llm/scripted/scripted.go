// Package scripted is the test double for llm.Model: a model that replays a script of
// responses, one per call, and records every request it received.
//
// A loop test scripts the model's side of a conversation and asserts on what the loop sent:
//
//	m := scripted.New(
//		scripted.Reply(scripted.Calls(scripted.Call("c1", "create_task", `{"title":"milk"}`))),
//		func(req llm.Request) (llm.Response, error) {
//			// inspect the tool results the loop sent back
//			return scripted.Text("Done."), nil
//		},
//	)
package scripted

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/stewardhq/steward/internal/llm"
)

// Name is the name every scripted Model reports.
const Name = "scripted"

// ErrExhausted is returned (wrapped) by Generate when every step of the script has been used.
var ErrExhausted = errors.New("scripted: script exhausted")

// Step produces the response to one call. It receives a copy of the request.
type Step func(req llm.Request) (llm.Response, error)

// Reply returns a Step that answers resp whatever the request.
func Reply(resp llm.Response) Step {
	return func(llm.Request) (llm.Response, error) { return resp, nil }
}

// Fail returns a Step that fails with err, as a provider error would.
func Fail(err error) Step {
	return func(llm.Request) (llm.Response, error) { return llm.Response{}, err }
}

// Model replays its steps in order, one per Generate call. It is safe for concurrent use;
// concurrent calls take steps in the order they reach the model.
type Model struct {
	mu       sync.Mutex
	steps    []Step
	next     int
	requests []llm.Request
}

var _ llm.Model = (*Model)(nil)

// New returns a Model that plays steps in order.
func New(steps ...Step) *Model {
	return &Model{steps: steps}
}

// Name returns Name.
func (m *Model) Name() string { return Name }

// Generate records req and answers with the next step. When onDelta is non-nil the answer's
// text is streamed to it word by word before Generate returns. A response with no Finish gets
// llm.FinishToolCalls or llm.FinishStop from its content, and one with no Model gets Name.
// A cancelled context fails the call without using a step, and a context cancelled while a
// step runs fails the call at once with the context's error, as a provider's client would:
// the step's answer, when it comes, is dropped.
func (m *Model) Generate(ctx context.Context, req llm.Request, onDelta llm.DeltaFunc) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	m.mu.Lock()
	m.requests = append(m.requests, cloneRequest(req))
	call := len(m.requests)
	var step Step
	if m.next < len(m.steps) {
		step = m.steps[m.next]
		m.next++
	}
	m.mu.Unlock()

	if step == nil {
		return llm.Response{}, fmt.Errorf("%w: call %d, the script has %d steps", ErrExhausted, call, len(m.steps))
	}
	type answer struct {
		resp llm.Response
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := step(cloneRequest(req))
		answered <- answer{resp, err}
	}()
	var resp llm.Response
	select {
	case a := <-answered:
		if a.err != nil {
			return llm.Response{}, a.err
		}
		resp = a.resp
	case <-ctx.Done():
		return llm.Response{}, ctx.Err()
	}
	if resp.Finish == "" {
		resp.Finish = llm.FinishStop
		if len(resp.ToolCalls()) > 0 {
			resp.Finish = llm.FinishToolCalls
		}
	}
	if resp.Model == "" {
		resp.Model = Name
	}
	if onDelta != nil {
		for _, word := range strings.SplitAfter(resp.Text(), " ") {
			if word == "" {
				continue
			}
			if err := onDelta(word); err != nil {
				return llm.Response{}, err
			}
		}
	}
	return resp, nil
}

// Requests returns copies of the requests received so far, in order.
func (m *Model) Requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]llm.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// Remaining returns how many steps have not been played yet; a test that expects the whole
// script to be used checks it is zero.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps) - m.next
}
