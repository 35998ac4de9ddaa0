package webapp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stewardhq/steward/internal/browsertest"
	"github.com/stewardhq/steward/internal/skillpack/skillpacktest"
)

// TestBrowserSkills drives the Skills page in Chromium at phone width: a skill uploaded as a
// zip is read and scanned, its card shows name, description, files and scan before anything
// is installed; Install turns it on; a hostile one is blocked and runs only after the
// override's box is ticked; the built-in meeting-notes skill, used in chat with the demo
// model, asks before each task and shows up under what it was used for.
func TestBrowserSkills(t *testing.T) {
	t.Parallel()
	srv, o := server(t)
	_, key := o.Owner(t, "alice")
	b := browsertest.Start(t, 390, 844, 120*time.Second)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "packing.zip"), filepath.Join(dir, "SKILL.md")
	os.WriteFile(good, skillpacktest.Zip(t, skillpacktest.Entry{Name: "packing/SKILL.md",
		Text: skillpacktest.SkillMD("packing-lists", "Packing lists for trips.", "# Packing\nList what to bring.")},
		skillpacktest.Entry{Name: "packing/basics.csv", Text: "item\nsocks\n"}), 0o600)
	os.WriteFile(bad, []byte(skillpacktest.SkillMD("self-approver", "Faster approvals.", skillpacktest.Hostile["safety_bypass"])), 0o600)

	var card, page string
	err := chromedp.Do(b, chromedp.EmulateViewport(390, 844), signIn(srv.URL, key), chromedp.Navigate(srv.URL+"/skills"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=file]`), []string{good}),
		chromedp.Click(chromedp.Search(`//button[text()="Read and scan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.approval-card`)),
		browsertest.Into(&card, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"packing-lists", "Packing lists for trips.", "SKILL.md", "basics.csv", "No findings.", "Install this skill?", "Waiting for your yes"} {
		if !strings.Contains(card, s) {
			t.Errorf("the card lacks %q:\n%s", s, card)
		}
	}
	browsertest.Shot(t, b, "skill-card-phone.png")
	err = chromedp.Do(b, chromedp.Click(chromedp.Search(`//button[text()="Install"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[contains(., "Installed packing-lists.")]`)),
		browsertest.Into(&page, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "Turn off") || !strings.Contains(page, "from outside (read as data)") {
		t.Errorf("after install:\n%s", page)
	}

	// A bomb is refused in words, inside the form, and nothing is staged.
	bomb := filepath.Join(dir, "bomb.zip")
	os.WriteFile(bomb, skillpacktest.Zip(t, skillpacktest.Entry{Name: "SKILL.md", Text: "x"},
		skillpacktest.Entry{Name: "zeros.txt", Size: 30 << 20}), 0o600)
	var refusal string
	err = chromedp.Do(b, chromedp.Navigate(srv.URL+"/skills"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=file]`), []string{bomb}),
		chromedp.Click(chromedp.Search(`//button[text()="Read and scan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.upload .error`)),
		browsertest.Into(&refusal, chromedp.Text(chromedp.CSS(`form.upload .error`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(refusal, "zeros.txt: decompression_bomb") {
		t.Errorf("the bomb's refusal says %q", refusal)
	}

	// A hostile skill: blocked; the override wants its box ticked.
	err = chromedp.Do(b, chromedp.Navigate(srv.URL+"/skills"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=file]`), []string{bad}),
		chromedp.Click(chromedp.Search(`//button[text()="Read and scan"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.findings`)),
		chromedp.Click(chromedp.Search(`//button[text()="Install"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.override`)),
		browsertest.Into(&page, chromedp.Text(chromedp.CSS(`main`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "Blocked by its scan") || !strings.Contains(page, "critical safety bypass in SKILL.md line 6") {
		t.Errorf("hostile skill's page:\n%s", page)
	}
	browsertest.Shot(t, b, "skill-blocked-phone.png")
	err = chromedp.Do(b, chromedp.Click(chromedp.CSS(`input[name=confirm]`)),
		chromedp.Click(chromedp.Search(`//button[text()="Override and turn on"]`)),
		chromedp.WaitVisible(chromedp.Search(`//p[contains(., "Overridden")]`)))
	if err != nil {
		t.Fatal(err)
	}

	// The built-in meeting notes skill in chat: each action item waits as a task.
	var summary string
	err = chromedp.Do(b, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=message]`)),
		send("use the meeting notes skill on this: Priya: I'll send the revised budget by 2026-12-11. Tom: We agreed to move the launch to June."),
		chromedp.WaitVisible(chromedp.CSS(`fieldset.card legend`)),
		browsertest.Into(&summary, chromedp.Text(chromedp.CSS(`fieldset.card legend .summary`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "Send the revised budget (owner: Priya)") {
		t.Errorf("the card says %q", summary)
	}
	browsertest.Shot(t, b, "skill-chat-phone.png")
	err = chromedp.Do(b, chromedp.Navigate(srv.URL+"/skills"), chromedp.WaitVisible(chromedp.CSS(`ul.uses`)),
		browsertest.Into(&page, chromedp.Text(chromedp.CSS(`ul.uses`))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "use the meeting notes skill on this") || !strings.Contains(page, "meeting-notes 1.0") {
		t.Errorf("recently used: %q", page)
	}
	browsertest.Shot(t, b, "skills-phone.png")
}
