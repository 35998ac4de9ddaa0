package webapp_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFormsKeepWhatWasTyped: a refused form comes back (422) with what the user typed in
// its fields and the refusal in words inside that form, above its fields, and nowhere else
// on the page; a secret typed into it (a bot token) is never written back. A form that
// succeeds answers 303, so a reload does not post it again.
func TestFormsKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	e := newFacesEnv(t, nil)

	// A standing rule whose predicate is not JSON.
	token := e.csrf("/settings")
	status, page := e.post("/settings/rules", url.Values{"csrf": {token}, "tool": {"create_task"}, "effect": {"deny"},
		"predicate": {`{"title": "buy`}, "match": {"pattern"}, "note": {"not on Sundays"}})
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("a rule with a bad predicate = %d; want 422:\n%s", status, page)
	}
	for _, want := range []string{
		`<form method="post" action="/settings/rules" class="rule"><p role="alert" class="error">&#34;When the arguments match&#34; must be a JSON object`,
		`name="tool" type="text" required maxlength="100" value="create_task">`,
		`value="{&#34;title&#34;: &#34;buy"`,
		`value="not on Sundays"`,
		`<option value="deny" selected>deny</option>`,
		`<option value="pattern" selected>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the refused rule form lacks %s:\n%s", want, page)
		}
	}
	if n := strings.Count(page, `role="alert"`); n != 1 || strings.Contains(page, `<option value="allow" selected>`) {
		t.Errorf("the refusal shows %d times (want once, in the rule form), or allow is still selected", n)
	}

	// A Telegram channel whose bot token has the wrong shape: the name, kind and chat stay;
	// the token (a secret) is not written back.
	token = e.csrf("/settings/channels")
	status, page = e.post("/settings/channels", url.Values{"csrf": {token}, "name": {"family"}, "kind": {"telegram"},
		"token": {"not-a-token-secret"}, "chat_id": {"4242"}, "default": {"on"}})
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad channel = %d; want 422:\n%s", status, page)
	}
	for _, want := range []string{
		`class="channel-form"><p role="alert" class="error">the Telegram bot token`,
		`name="name" type="text" required maxlength="32" pattern="[a-z0-9][a-z0-9_-]*" value="family">`,
		`<option value="telegram" selected>telegram</option>`,
		`name="chat_id" type="text" maxlength="40" value="4242">`,
		`name="default" type="checkbox" value="on" checked>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the refused channel form lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "not-a-token-secret") {
		t.Error("the refused channel form writes the bot token back into the page")
	}

	// Done: a redirect, and the page after it has empty fields again.
	status, _ = e.post("/settings/rules", url.Values{"csrf": {token}, "tool": {"create_task"}, "effect": {"deny"}, "note": {"never"}})
	if page = e.redirected(); status != http.StatusSeeOther || !strings.Contains(page, "never") || strings.Contains(page, `value="never"`) {
		t.Errorf("a rule added = %d; want 303 to the settings listing it, the form empty:\n%s", status, page)
	}
}
