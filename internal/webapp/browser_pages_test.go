package webapp_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/stewardhq/steward/internal/agent"
	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/document"
	"github.com/stewardhq/steward/internal/httpapi"
	"github.com/stewardhq/steward/internal/ledger"
	"github.com/stewardhq/steward/internal/sessions"
	"github.com/stewardhq/steward/internal/steward"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/testdb"
	"github.com/stewardhq/steward/internal/webapp"
)

// TestBrowserMoneyAndDocuments drives the Money and Documents pages in headless Chromium: the
// seeded ledger's April (balance, spending by category, a budget over its limit, recent
// transactions), then a Markdown file uploaded through the form and previewed. With
// STEWARD_SCREENSHOTS set it writes money-desktop.png, money-phone.png and
// document-preview-desktop.png.
func TestBrowserMoneyAndDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := testdb.Open(t, 10)
	owner, key := o.Owner(t, "dana")
	runner := agent.New(agent.Config{Store: o.Store, Now: func() time.Time { return time.Date(2026, 4, 30, 18, 0, 0, 0, time.UTC) }}, agent.Hooks{})
	door, err := store.OpenDoor(ctx, o.DoorURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(door.Close)
	ledgers, docs := &ledger.Service{Store: o.Store}, &document.Service{Store: o.Store}
	if _, err := ledgers.Seed(ctx, owner.ID); err != nil {
		t.Fatal(err)
	}
	err = o.Store.WithOwner(ctx, owner.ID, func(tx *store.Tx) error {
		if _, err := tx.Ledger.SetBudget(ctx, steward.Budget{Category: "Groceries", MonthlyMinor: 40000, Currency: "EUR"}); err != nil {
			return err
		}
		_, err := tx.Ledger.SetBudget(ctx, steward.Budget{Category: "Eating out", MonthlyMinor: 15000, Currency: "EUR"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(httpapi.New(httpapi.Deps{Runner: runner, Store: o.Store, Auth: door, Logger: zerolog.Nop(), Documents: docs,
		Web: webapp.Routes(withServices(webapp.Deps{Runner: runner, Store: o.Store, Door: door, Logger: zerolog.Nop(), Ledger: ledgers, Documents: docs,
			Sessions: &sessions.Service{Store: o.Store, Now: time.Now}}))})) // sessions live in the database's time, the ledger in April 2026
	t.Cleanup(hs.Close)
	srv := hs.URL

	b := browser(t)
	var money string
	err = chromedp.Do(b, chromedp.Navigate(srv+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=api_key]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=api_key]`), key),
		chromedp.Click(chromedp.Search(`//button[text()="Sign in"]`)),
		chromedp.WaitVisible(chromedp.Search(`//a[text()="Money"]`)),
		chromedp.Navigate(srv+"/money"),
		chromedp.WaitVisible(chromedp.CSS(`main`)),
		browsertest.Into(&money, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	// April holds the grocery bill ten times the usual (487.30 EUR), so Groceries is over.
	for _, want := range []string{"Giro", "This month (2026-04)", "Groceries", "over budget", "REWE Markt"} {
		if !strings.Contains(money, want) {
			t.Errorf("the money page lacks %q:\n%s", want, money)
		}
	}
	browsertest.Shot(t, b, "money-desktop.png")
	if err := chromedp.Do(b, chromedp.EmulateViewport(390, 844), chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	browsertest.Shot(t, b, "money-phone.png")
	if err := chromedp.Do(b, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	file := filepath.Join(t.TempDir(), "boiler-service.md")
	notes := "# Boiler service\n\nThe boiler was serviced on 3 October 2026 by Heizung Meyer (invoice 2026-311, 184.00 EUR).\n\n" +
		"- Next service due: October 2027\n- Pressure set to 1.5 bar\n- Warranty until 2029\n"
	if err := os.WriteFile(file, []byte(notes), 0o600); err != nil {
		t.Fatal(err)
	}
	var preview string
	err = chromedp.Do(b, chromedp.Navigate(srv+"/documents"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=file]`), []string{file}),
		chromedp.Click(chromedp.Search(`//button[text()="Upload"]`)),
		chromedp.WaitVisible(chromedp.Search(`//a[text()="boiler-service.md"]`)),
		chromedp.Click(chromedp.Search(`//a[text()="boiler-service.md"]`)),
		chromedp.WaitVisible(chromedp.Search(`//a[text()="Download the original"]`)),
		browsertest.Into(&preview, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(preview, "Heizung Meyer") || !strings.Contains(preview, "Next service due") {
		t.Errorf("the preview lacks the document's text:\n%s", preview)
	}
	browsertest.Shot(t, b, "document-preview-desktop.png")
}
