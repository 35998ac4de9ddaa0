package steward_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation is part of the product: the README is a front door of at most 15 KB that
// links to every page of docs/, ARCHITECTURE.md is a map of at most 40 KB that links to every
// page of docs/decisions/ (the history behind it), and every relative link or image in
// README.md, docs/*.md and docs/decisions/*.md must lead somewhere — to a file that exists and,
// with a #fragment, to a heading in it.
const (
	readmeMaxBytes       = 15 * 1024
	architectureMaxBytes = 40 * 1024
)

var (
	// mdLink matches [text](target) and ![alt](target); the target ends at a space (a title
	// follows) or the closing parenthesis.
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// htmlRef matches src="…" and href="…" of inline HTML (images laid out side by side).
	htmlRef   = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	codeSpan  = regexp.MustCompile("`[^`]*`")
	htmlNote  = regexp.MustCompile(`(?s)<!--.*?-->`)
	slugStrip = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

func TestDocs(t *testing.T) {
	root := filepath.Join("..", "..")
	readme := filepath.Join(root, "README.md")
	info, err := os.Stat(readme)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > readmeMaxBytes {
		t.Errorf("README.md is %d bytes; keep it a front door of at most %d (15 KB) and move the detail into docs/", info.Size(), readmeMaxBytes)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := filepath.Glob(filepath.Join(root, "docs", "decisions", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append(append([]string{readme}, docs...), decisions...) {
		for _, p := range brokenLinks(t, file) {
			t.Error(p)
		}
	}
	front, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		if !strings.Contains(string(front), "](docs/"+filepath.Base(doc)+")") {
			t.Errorf("README.md does not link to docs/%s: every page of docs/ is linked from the front door", filepath.Base(doc))
		}
	}
	architecture, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range decisions {
		if !regexp.MustCompile(`\]\(decisions/` + regexp.QuoteMeta(filepath.Base(doc)) + `[#)]`).Match(architecture) {
			t.Errorf("docs/ARCHITECTURE.md does not link to decisions/%s: every page of docs/decisions/ is linked from the section it explains", filepath.Base(doc))
		}
	}
}

// TestDocsArchitectureSize: ARCHITECTURE.md is a map a newcomer reads in one sitting; the
// history of decisions, measurements and alternatives live in docs/decisions/.
func TestDocsArchitectureSize(t *testing.T) {
	info, err := os.Stat(filepath.Join("..", "..", "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > architectureMaxBytes {
		t.Errorf("docs/ARCHITECTURE.md is %d bytes; keep it at most %d (40 KB) and move history, measurements and alternatives into docs/decisions/", info.Size(), architectureMaxBytes)
	}
}

// TestDocsArchitectureNamesToolsets: every toolset package under internal/tools/ is named in
// ARCHITECTURE.md §1 (as `tools/<name>`), so the map of who may import whom cannot drift
// from the tree.
func TestDocsArchitectureNamesToolsets(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## §1 ")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "## §1" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	entries, err := os.ReadDir(filepath.Join(root, "internal", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	toolsets := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sources, err := filepath.Glob(filepath.Join(root, "internal", "tools", e.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(sources) == 0 {
			continue
		}
		toolsets++
		if !strings.Contains(section, "tools/"+e.Name()) {
			t.Errorf("internal/tools/%s is not named in docs/ARCHITECTURE.md §1 (as tools/%s)", e.Name(), e.Name())
		}
	}
	if toolsets < 9 {
		t.Fatalf("found only %d toolsets under internal/tools/", toolsets)
	}
}

// TestDocsReadmeTestCommand: the README's test command is the one the CI runs.
func TestDocsReadmeTestCommand(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make test\b`).Match(readme) {
		t.Error("README.md does not show the test command `make test` at the start of a line")
	}
	if !regexp.MustCompile(`(?m)^step "[^"]*" make (--no-print-directory )?test$`).Match(ci) {
		t.Error(".ci/run does not run `make test` as a step: the README's test command must be what CI runs")
	}
}

// TestDocsCatchesABrokenLink: the check is not vacuous.
func TestDocsCatchesABrokenLink(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B\n\n## Real heading\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(dir, "a.md")
	body := "# A `code`\n\n[ok](b.md) [ok](b.md#real-heading) [ok](#a-code) [web](https://example.com)\n" +
		"`[in code](gone.md)`\n```\n[in a fence](gone.md)\n```\n<!-- [in a comment](gone.md) -->\n" +
		"[gone](gone.md) ![gone](img/none.png) [bad anchor](b.md#nowhere) <img src=\"none.png\">\n"
	if err := os.WriteFile(a, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got := brokenLinks(t, a)
	want := []string{"gone.md", "img/none.png", "b.md#nowhere", "none.png"}
	if len(got) != len(want) {
		t.Fatalf("broken links = %q; want the %d of %q", got, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("broken link %d = %q; want it to name %q", i, got[i], w)
		}
	}
}

// brokenLinks lists, in order, each relative link or image of file whose target does not exist,
// or whose #fragment names no heading of its Markdown target. Links in code and comments are
// not links.
func brokenLinks(t *testing.T, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var broken []string
	inFence := false
	for n, line := range strings.Split(htmlNote.ReplaceAllString(string(raw), ""), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range htmlRef.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if problem := checkTarget(t, file, target); problem != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", file, n+1, target, problem))
			}
		}
	}
	return broken
}

// checkTarget says what is wrong with one link target of file, or "".
func checkTarget(t *testing.T, file, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if _, err := os.Stat(dest); err != nil {
			return "no such file"
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if !headingAnchors(t, dest)[fragment] {
		return "no heading with this anchor in " + filepath.Base(dest)
	}
	return ""
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown file: lowercased,
// punctuation dropped, spaces as hyphens, and -1, -2… on repeats.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := strings.ReplaceAll(slugStrip.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if k := seen[slug]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// TestDocsNamePackages: every package under internal/ is named in HOW-IT-WORKS.md's "Where
// things are" (its directory's name and a slash, as `internal/agent/` or a nested `gemini/`),
// so the map a newcomer reads first cannot drift from the tree.
func TestDocsNamePackages(t *testing.T) {
	root := filepath.Join("..", "..")
	raw, err := os.ReadFile(filepath.Join(root, "docs", "HOW-IT-WORKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, where, ok := strings.Cut(string(raw), "## Where things are")
	if !ok {
		t.Fatal(`docs/HOW-IT-WORKS.md has no "## Where things are"`)
	}
	if i := strings.Index(where, "\n## "); i >= 0 {
		where = where[:i]
	}
	packages := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(filepath.Join(root, "internal"), filepath.Dir(path))
			packages[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(packages) < 50 {
		t.Fatalf("found only %d packages under internal/", len(packages))
	}
	for pkg := range packages {
		if !strings.Contains(where, filepath.Base(pkg)+"/") {
			t.Errorf("internal/%s is not named in docs/HOW-IT-WORKS.md's \"Where things are\"", pkg)
		}
	}
}
