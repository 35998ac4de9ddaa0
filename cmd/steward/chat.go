package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/google/uuid"

	"github.com/stewardhq/steward/internal/config"
)

const chatUsage = `Usage:
  steward chat [--url URL] [--key KEY] [--conversation ID] [--json] [--voice FILE] [MESSAGE]

Chat with Steward as an owner, over the HTTP API (STEWARD_URL, default the local server;
STEWARD_API_KEY). Answers stream as they are written; at each pending write you are asked
y (approve), n (deny, with an optional reason), a (approve and always allow this tool with
these exact arguments) or t (approve and always allow this tool with any arguments); money
and egress tools offer neither a nor t and are asked every time.
With MESSAGE, one turn runs and the command exits; without, it reads messages line by line
until end of input or "exit".

--json prints one JSON object (the TurnView) per turn instead of streaming text.

--voice FILE sends a recording (WAV, Ogg, WebM, MP3 or M4A) as the message: the server
transcribes it (printed as "heard: …"), the transcript is the message, and the turn runs as
with MESSAGE (docs/VOICE.md).

Exit status of a turn: 0 answered, 1 error, 2 iteration limit reached, 3 over budget,
4 stopped by the kill switch.
`

// Exit statuses of steward chat.
const (
	exitIterationLimit = 2
	exitOverBudget     = 3
	exitKilled         = 4
)

// exitError ends the command with a specific exit status.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func runChat(ctx context.Context, e env, cfg config.Config, args []string) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	url := fs.String("url", cfg.ServerURL, "server URL")
	key := fs.String("key", cfg.APIKey, "API key")
	conv := fs.String("conversation", "", "continue this conversation")
	asJSON := fs.Bool("json", false, "one JSON object per turn")
	recording := fs.String("voice", "", "a recording to send as the first message")
	pos, err := parseFlags(fs, args, chatUsage, 0, 1)
	if err != nil {
		return err
	}
	if *key == "" {
		return errors.New("chat: no API key: set STEWARD_API_KEY or pass --key (steward owners add prints one)")
	}
	c := &chatClient{base: strings.TrimRight(*url, "/"), key: *key, json: *asJSON, out: e.stdout, prompt: e.stderr,
		in: bufio.NewReader(e.stdin), http: &http.Client{Timeout: 15 * time.Minute}}
	if *conv != "" {
		id, err := uuid.Parse(*conv)
		if err != nil {
			return usageError{msg: "--conversation is not a UUID", usage: chatUsage}
		}
		c.conversation = &id
	}
	switch {
	case *recording != "" && len(pos) == 1:
		return usageError{msg: "send a MESSAGE or --voice FILE, not both", usage: chatUsage}
	case *recording != "":
		return c.voiceTurn(ctx, *recording)
	case len(pos) == 1:
		return c.turn(ctx, pos[0])
	}
	for {
		fmt.Fprint(c.prompt, "you> ")
		line, err := c.in.ReadString('\n')
		msg := strings.TrimSpace(line)
		if msg == "exit" || msg == "quit" || (msg == "" && err != nil) {
			return nil
		}
		if msg != "" {
			if terr := c.turn(ctx, msg); terr != nil {
				var x exitError
				if !errors.As(terr, &x) || x.code == 1 {
					fmt.Fprintf(c.prompt, "error: %s\n", terr)
				}
			}
		}
		if err != nil {
			return nil
		}
	}
}

// chatClient talks to the HTTP API.
type chatClient struct {
	base, key    string
	json         bool
	conversation *uuid.UUID
	http         *http.Client
	out, prompt  io.Writer
	in           *bufio.Reader
}

// turn sends a message and follows the turn through every approval to its end.
func (c *chatClient) turn(ctx context.Context, msg string) error {
	body := map[string]any{"message": msg}
	if c.conversation != nil {
		body["conversation_id"] = c.conversation
	}
	v, err := c.post(ctx, "/v1/chat", body)
	return c.follow(ctx, v, err)
}

// follow takes a turn's view (or the error of its request) through every approval to its end.
func (c *chatClient) follow(ctx context.Context, v steward.View, err error) error {
	for err == nil && v.Status == steward.StatusSuspended {
		var decisions []steward.Decision
		decisions, err = c.decide(v)
		if err == nil {
			v, err = c.post(ctx, "/v1/turns/"+v.TurnID.String()+"/confirm", map[string]any{"decisions": decisions})
		}
	}
	if err != nil {
		return err
	}
	c.conversation = &v.ConversationID
	if c.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(c.out, string(b))
	} else {
		fmt.Fprintln(c.out)
	}
	switch {
	case v.Status == steward.StatusAborted:
		return exitError{exitKilled, "stopped: " + v.Error}
	case v.Status != steward.StatusCompleted:
		return exitError{1, fmt.Sprintf("turn %s: %s", v.Status, v.Error)}
	case v.IterationLimit:
		return exitError{exitIterationLimit, "the turn reached its step limit"}
	}
	return nil
}

// decide asks the owner about each pending call.
func (c *chatClient) decide(v steward.View) ([]steward.Decision, error) {
	var ds []steward.Decision
	for _, p := range v.Pending {
		choices := "[y]es / [n]o / [a]lways with these arguments / always for any [t]ool arguments"
		if !p.AlwaysOffered {
			choices = "[y]es / [n]o (always is not offered: this tool is asked every time)"
		}
		fmt.Fprintf(c.prompt, "\nSteward wants to run %s %s\napprove? %s: ", p.Tool, p.Args, choices)
		line, err := c.in.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		if answer == "" && err != nil {
			return nil, errors.New("no answer for a pending write (end of input); the turn stays in /v1/approvals")
		}
		d := steward.Decision{CallID: p.CallID, ArgsHash: p.ArgsHash}
		switch {
		case answer == "y" || answer == "yes":
			d.Approve = true
		case p.AlwaysOffered && (answer == "a" || answer == "always"):
			d.Approve, d.Always = true, steward.AlwaysArgs
		case p.AlwaysOffered && (answer == "t" || answer == "tool"):
			d.Approve, d.Always = true, steward.AlwaysTool
		default: // anything else, and always where it is not offered, denies
			fmt.Fprint(c.prompt, "reason (optional): ")
			reason, _ := c.in.ReadString('\n')
			d.Message = strings.TrimSpace(reason)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// post sends one request and reads its event stream (or, with --json, its JSON) to the
// final TurnView, printing answer text as it streams.
func (c *chatClient) post(ctx context.Context, path string, body any) (steward.View, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return steward.View{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return steward.View{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	if !c.json {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return steward.View{}, fmt.Errorf("cannot reach %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return steward.View{}, apiFailure(resp)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var v steward.View
		return v, json.NewDecoder(resp.Body).Decode(&v)
	}
	return c.readStream(resp.Body)
}

// readStream follows server-sent events to the terminal one.
func (c *chatClient) readStream(r io.Reader) (steward.View, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := []byte(strings.TrimPrefix(line, "data: "))
			switch event {
			case "text":
				var t struct{ Text string }
				json.Unmarshal(data, &t) //nolint:errcheck // a malformed delta is skipped
				fmt.Fprint(c.out, t.Text)
			case "tool_call":
				var t struct{ Tool string }
				json.Unmarshal(data, &t) //nolint:errcheck
				fmt.Fprintf(c.prompt, "[%s]\n", t.Tool)
			case "suspended", "completed", "error":
				var v steward.View
				if err := json.Unmarshal(data, &v); err != nil || v.TurnID == uuid.Nil {
					return steward.View{}, streamFailure(data)
				}
				return v, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return steward.View{}, fmt.Errorf("reading the stream: %w", err)
	}
	return steward.View{}, errors.New("the stream ended before the turn did")
}

// apiError is the API's error body.
type apiError struct {
	Error struct {
		Code    steward.Code `json:"code"`
		Reason  string       `json:"reason"`
		Message string       `json:"message"`
	} `json:"error"`
}

// apiFailure turns an error response into the matching exit status.
func apiFailure(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return failureOf(b, resp.Status)
}

func streamFailure(data []byte) error { return failureOf(data, "stream error") }

func failureOf(body []byte, status string) error {
	var e apiError
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" {
		return exitError{1, "server answered " + status}
	}
	msg := fmt.Sprintf("%s: %s", e.Error.Code, e.Error.Message)
	switch e.Error.Code {
	case steward.CodeOverBudget, steward.CodeRateLimited:
		return exitError{exitOverBudget, msg}
	case steward.CodeKilled:
		return exitError{exitKilled, msg}
	}
	return exitError{1, msg}
}
