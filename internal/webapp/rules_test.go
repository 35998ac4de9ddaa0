package webapp_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// pageText is what a reader of an HTML page sees: the text without tags, entities decoded,
// runs of white space as one space.
func pageText(page string) string {
	text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " "))
	return strings.Join(strings.Fields(text), " ")
}

// TestSettingsSaysHowEachRuleMatches (issue 27 §4): the settings page's rule form stores an
// exact rule unless "match" says pattern, and the list says in words what each rule covers:
// exactly these arguments, or any call whose title is X with other arguments anything. A
// predicate naming an argument the tool does not have is refused (422) with the message.
func TestSettingsSaysHowEachRuleMatches(t *testing.T) {
	t.Parallel()
	e := newFacesEnv(t, nil)
	csrf := e.csrf("/settings")
	for _, form := range []url.Values{
		{"tool": {"create_task"}, "effect": {"allow"}, "predicate": {`{"title":"milk"}`}, "match": {"pattern"}},
		{"tool": {"create_task"}, "effect": {"allow"}, "predicate": {`{"title":"bread"}`}},
		{"tool": {"notify"}, "effect": {"deny"}},
	} {
		form.Set("csrf", csrf)
		if status, page := e.post("/settings/rules", form); status != http.StatusSeeOther {
			t.Fatalf("add rule %v: %d %s", form, status, pageText(page))
		}
	}
	status, page := e.post("/settings/rules", url.Values{"csrf": {csrf}, "tool": {"create_task"}, "effect": {"allow"}, "predicate": {`{"titel":"x"}`}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(pageText(page), `"titel"`) {
		t.Errorf("a predicate on an argument create_task does not have: %d, page %q", status, pageText(page))
	}
	_, page = e.get("/settings")
	text := pageText(page)
	for _, want := range []string{
		`allow any call of create_task whose title is "milk", other arguments anything`,
		`allow only a call of create_task whose arguments are exactly {"title":"bread"}`,
		`deny any call of notify, any arguments`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("settings page does not say %q:\n%s", want, text)
		}
	}
	if !strings.Contains(page, `name="match"`) {
		t.Errorf("the rule form has no match field")
	}
}
