package benchscale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// client drives one owner's requests against steward serve over HTTP, as the API's clients do.
type client struct {
	base, key string
	http      *http.Client
	// story is a turn of the owner whose events the story operation reads: the last cycle's.
	story string
}

// turnView is the part of a TurnView the client reads.
type turnView struct {
	TurnID  string `json:"turn_id"`
	Status  string `json:"status"`
	Answer  string `json:"answer"`
	Pending []struct {
		CallID   string `json:"call_id"`
		Tool     string `json:"tool"`
		ArgsHash string `json:"args_hash"`
	} `json:"pending"`
}

// suspend is a chat that suspends on the fake model's create_task: the turn waiting for approval.
func (c *client) suspend(ctx context.Context) (turnView, error) {
	var v turnView
	if err := c.do(ctx, http.MethodPost, "/v1/chat", map[string]any{"message": "remind me to buy milk"}, &v); err != nil {
		return v, fmt.Errorf("chat: %w", err)
	}
	if v.Status != "suspended" || len(v.Pending) != 1 || v.Pending[0].Tool != "create_task" {
		return v, fmt.Errorf("chat: want suspended on create_task, got %+v", v)
	}
	return v, nil
}

// cycle is the approval cycle: chat → suspended, confirm (approve) → completed.
func (c *client) cycle(ctx context.Context) error {
	v, err := c.suspend(ctx)
	if err != nil {
		return err
	}
	decision := map[string]any{"decisions": []map[string]any{
		{"call_id": v.Pending[0].CallID, "approve": true, "args_hash": v.Pending[0].ArgsHash}}}
	var done turnView
	if err := c.do(ctx, http.MethodPost, "/v1/turns/"+v.TurnID+"/confirm", decision, &done); err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	if done.Status != "completed" || !strings.Contains(done.Answer, "buy milk") {
		return fmt.Errorf("confirm: want completed with an answer, got %+v", done)
	}
	c.story = v.TurnID
	return nil
}

// get reads path and checks that the answer is 200 with a JSON body.
func (c *client) get(ctx context.Context, path string) error {
	var out json.RawMessage
	return c.do(ctx, http.MethodGet, path, nil, &out)
}

func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

// operation is one measured thing an owner does: the approval cycle or one read route.
type operation struct {
	name string
	run  func(context.Context, *client) error
}

// operations are what the benchmark measures, in the order of its table.
func operations() []operation {
	read := func(name string, path func(*client) string) operation {
		return operation{name: name, run: func(ctx context.Context, c *client) error { return c.get(ctx, path(c)) }}
	}
	fixed := func(p string) func(*client) string { return func(*client) string { return p } }
	return []operation{
		{name: "approval cycle (chat → suspended → confirm → completed)", run: func(ctx context.Context, c *client) error { return c.cycle(ctx) }},
		read("conversations list", fixed("/v1/conversations")),
		read("approvals inbox", fixed("/v1/approvals")),
		read("activity", fixed("/v1/activity")),
		read("story (a turn's events)", func(c *client) string { return "/v1/turns/" + c.story + "/events" }),
		read("ledger report (last 30 days, by category)", func(*client) string {
			to := time.Now().UTC()
			return "/v1/ledger/report?" + url.Values{"from": {to.AddDate(0, 0, -30).Format(time.DateOnly)},
				"to": {to.Format(time.DateOnly)}, "by": {"category"}}.Encode()
		}),
		read("memory search", fixed("/v1/memory/search?q=milk&k=5")),
	}
}
