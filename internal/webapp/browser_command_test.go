package webapp_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/apptest"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/llm/scripted"
)

// TestBrowserRunCommandCardShowsCommand: at phone width, a run_command call waits on an
// approval card that shows the exact command line as a field, with no "always" button;
// approved, its output is in the call's chip.
func TestBrowserRunCommandCardShowsCommand(t *testing.T) {
	t.Parallel()
	root, err := os.MkdirTemp("", "steward-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	command := `ls -la /work && echo "sum: $((40+2))"`
	e := apptest.New(t, apptest.Options{Env: map[string]string{"STEWARD_SHELL": "on", "STEWARD_SHELL_ROOT": root},
		Model: scripted.New(scripted.Reply(scripted.Calls(scripted.Call("w1", "run_command", `{"command":`+quoteJSON(command)+`}`))),
			scripted.Reply(scripted.Text("Ran it.")))})
	_, key := e.DB.Owner(t, "shell")
	ctx := browsertest.Start(t, 390, 844, 120*time.Second)
	var card, always, chip string
	err = chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), signIn(e.Server.URL, key), send("list my workspace"),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card`)),
		browsertest.Into(&card, chromedp.Text(chromedp.CSS(`fieldset.card`))),
		browsertest.Into(&always, chromedp.Evaluate[string](`String(document.querySelectorAll('fieldset.card [data-choice="always"]').length)`)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "run-command-card.png")
	if !strings.Contains(card, command) || always != "0" {
		t.Fatalf("the card reads %q (always buttons %s); want the exact command and no always", card, always)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`fieldset.card [data-choice="approve"]`)),
		chromedp.WaitVisible(chromedp.Search(`//div[contains(@class,"assistant")][contains(., "Ran it.")]`)),
		chromedp.Click(chromedp.CSS(`#log details.chip summary`)),
		browsertest.Into(&chip, chromedp.Text(chromedp.CSS(`#log details.chip .chip-body`))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, ctx, "run-command-done.png")
	if !strings.Contains(chip, "sum: 42") {
		t.Fatalf("the chip reads %q; want the command's output", chip)
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
