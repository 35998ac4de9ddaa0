package webapp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/store"
)

// TestBrowserDeleteConversation drives a conversation's delete in Chromium at phone width:
// the conversation's "Rename or delete" page says what goes and lists the fact learned from
// it to keep or forget; Delete conversation removes it, and its words are then in neither
// the list, its page, nor the chats' search.
func TestBrowserDeleteConversation(t *testing.T) {
	t.Parallel()
	const canary = "zebracanary"
	ctx := context.Background()
	srv, o := server(t)
	owner, key := o.Owner(t, "alice")
	b := browsertest.Start(t, 390, 844, 120*time.Second)
	if err := chromedp.Do(b, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key)); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	if err := chromedp.Do(b, send("what time is it, "+canary+"?"), chromedp.WaitVisible(chromedp.CSS(`#log .msg.assistant`))); err != nil {
		t.Fatalf("chat: %v", err)
	}
	// A fact Steward learned from it.
	var convURL string
	if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		convs, err := tx.Conversations.List(ctx, 10)
		if err != nil || len(convs) != 1 {
			t.Fatalf("conversations: %v, %v", convs, err)
		}
		convURL = srv.URL + "/c/" + convs[0].ID.String()
		turns, err := tx.Turns.InConversation(ctx, convs[0].ID, 10)
		if err != nil {
			return err
		}
		_, _, err = tx.Memory.RememberFact(ctx, store.NewMemoryFact{Kind: "fact", Content: "The " + canary + " is the owner's favourite animal",
			Source: store.FactSourceIngest, TurnID: &turns[0].ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	var confirm string
	var err error
	err = chromedp.Do(b, chromedp.Navigate(convURL),
		chromedp.Click(chromedp.Search(`//a[text()="Rename or delete"]`)),
		chromedp.WaitVisible(chromedp.Search(`//button[text()="Delete conversation"]`)),
		browsertest.Into(&confirm, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Deleting this conversation removes its 4 messages and 1 turn", "cannot be undone",
		"1 fact Steward learned from it", "favourite animal", "Keep them in memory", "Forget them too"} {
		if !strings.Contains(confirm, s) {
			t.Errorf("the confirmation lacks %q:\n%s", s, confirm)
		}
	}
	browsertest.Shot(t, b, "delete-conversation-phone.png")

	var list, search string
	err = chromedp.Do(b, chromedp.Click(chromedp.CSS(`#facts-forget`)),
		chromedp.Click(chromedp.Search(`//button[text()="Delete conversation"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[text()="No conversations yet."]`)),
		browsertest.Into(&list, chromedp.Text(chromedp.CSS(`main`))),
		chromedp.Navigate(srv.URL+"/conversations/search?q="+canary),
		chromedp.WaitVisible(chromedp.CSS(`.search-page`)),
		browsertest.Into(&search, chromedp.Text(chromedp.CSS(`.search-page`))))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list, canary) {
		t.Errorf("the list still shows the deleted conversation:\n%s", list)
	}
	if !strings.Contains(search, "No conversation holds") {
		t.Errorf("the search finds the deleted conversation:\n%s", search)
	}
	var status string
	if err := chromedp.Do(b, chromedp.Navigate(convURL), browsertest.Into(&status, chromedp.Title())); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(status, "Not found") {
		t.Errorf("the deleted conversation's page is titled %q, want Not found", status)
	}
	if err := o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		facts, err := tx.Tasks.ListFacts(ctx, 10)
		if len(facts) != 0 {
			t.Errorf("facts remain after choosing to forget them: %+v", facts)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
