package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/steward"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/config"
	"github.com/stewardhq/steward/internal/llm/scripted"
	"github.com/stewardhq/steward/internal/store"
)

// chatServer is the production graph (internal/apptest) on a fresh database with a scripted
// model and at most maxIter model calls a turn; it returns the config a chat client needs and
// the pieces to inspect.
func chatServer(t *testing.T, maxIter int, steps ...scripted.Step) (config.Config, *store.Door, *store.Store, store.Owner) {
	t.Helper()
	app := apptest.New(t, apptest.Options{Model: scripted.New(steps...), MaxConns: 5,
		Env: map[string]string{"STEWARD_MAX_ITERATIONS": strconv.Itoa(maxIter)}})
	owner, key := app.DB.Owner(t, "alice")
	return config.Config{ServerURL: app.Server.URL, APIKey: key}, app.DB.Door, app.DB.Store, owner
}

// chat runs `steward chat` with stdin and returns stdout, stderr and the exit status.
func chat(t *testing.T, cfg config.Config, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runChat(context.Background(), env{stdout: &out, stderr: &errOut, stdin: strings.NewReader(stdin)}, cfg, args)
	return out.String(), errOut.String(), exitCode(err, io.Discard)
}

func TestChatApprovesInlineAndStreams(t *testing.T) {
	t.Parallel()
	cfg, _, s, owner := chatServer(t, 4,
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))),
		scripted.Reply(scripted.Text("Added it to your list.")))
	out, prompts, code := chat(t, cfg, "y\n", "remind me to buy milk")
	if code != 0 || !strings.Contains(out, "Added it to your list.") || !strings.Contains(prompts, `create_task {"title":"buy milk"}`) {
		t.Fatalf("exit %d\nout: %s\nprompts: %s", code, out, prompts)
	}
	var tasks []steward.Task
	s.WithOwner(context.Background(), owner.ID, func(tx *store.Tx) error {
		var err error
		tasks, err = tx.Tasks.ListTasks(context.Background(), "all")
		return err
	})
	if len(tasks) != 1 {
		t.Fatalf("%d tasks", len(tasks))
	}
}

func TestChatDenyAndJSON(t *testing.T) {
	t.Parallel()
	cfg, _, _, _ := chatServer(t, 4,
		scripted.Reply(scripted.Calls(scripted.Call("w1", "create_task", `{"title":"buy milk"}`))),
		scripted.Reply(scripted.Text("Okay, I did not add it.")))
	out, _, code := chat(t, cfg, "n\nnot today\n", "--json", "remind me to buy milk")
	var v steward.View
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil || code != 0 {
		t.Fatalf("exit %d, out %q: %v", code, out, err)
	}
	if v.Status != steward.StatusCompleted || v.Answer != "Okay, I did not add it." {
		t.Fatalf("view = %+v", v)
	}
}

func TestChatExitCodes(t *testing.T) {
	t.Parallel()
	t.Run("iteration limit", func(t *testing.T) {
		t.Parallel()
		cfg, _, _, _ := chatServer(t, 1,
			scripted.Reply(scripted.Calls(scripted.Call("r1", "get_current_time", `{}`))),
			scripted.Reply(scripted.Text("It is noon.")))
		if _, _, code := chat(t, cfg, "", "what time is it"); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})
	t.Run("over budget", func(t *testing.T) {
		t.Parallel()
		cfg, door, _, owner := chatServer(t, 4)
		if err := door.SetDailyLimits(context.Background(), owner.ID, 0, 1); err != nil {
			t.Fatal(err)
		}
		if _, _, code := chat(t, cfg, "", "hello"); code != 3 {
			t.Fatalf("exit %d, want 3", code)
		}
	})
	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		cfg, _, s, owner := chatServer(t, 4)
		s.WithOwner(context.Background(), owner.ID, func(tx *store.Tx) error { return tx.Safety.SetKill(context.Background(), true, "holiday") })
		if _, _, code := chat(t, cfg, "", "hello"); code != 4 {
			t.Fatalf("exit %d, want 4", code)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		t.Parallel()
		cfg, _, _, _ := chatServer(t, 4)
		cfg.APIKey = "stw_wrong"
		if _, _, code := chat(t, cfg, "", "hello"); code != 1 {
			t.Fatalf("exit %d, want 1", code)
		}
	})
	t.Run("repl until end of input", func(t *testing.T) {
		t.Parallel()
		cfg, _, _, _ := chatServer(t, 4, scripted.Reply(scripted.Text("Hi!")), scripted.Reply(scripted.Text("Bye!")))
		out, _, code := chat(t, cfg, "hello\nsee you\n")
		if code != 0 || !strings.Contains(out, "Hi!") || !strings.Contains(out, "Bye!") {
			t.Fatalf("exit %d, out %q", code, out)
		}
	})
}
