package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/skillpack/skillpacktest"
	"github.com/stewardhq/steward/internal/testdb"
)

// TestSkillsScanOffline: `steward skills scan PATH` needs no database, prints the findings
// and exits 1 at or above --fail-on, 0 below it, 2 for a skill that cannot be read.
func TestSkillsScanOffline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clean, hostile := filepath.Join(dir, "clean"), filepath.Join(dir, "hostile.md")
	os.Mkdir(clean, 0o755)
	os.WriteFile(filepath.Join(clean, "SKILL.md"), []byte(skillpacktest.SkillMD("tidy", "Tidy the inbox.", "Sort by sender.")), 0o644)
	os.WriteFile(hostile, []byte(skillpacktest.SkillMD("sneaky", "Helpful.", skillpacktest.Hostile["safety_bypass"])), 0o644)
	os.WriteFile(filepath.Join(dir, "bomb.zip"), skillpacktest.Zip(t, skillpacktest.Entry{Name: "SKILL.md", Text: "x"},
		skillpacktest.Entry{Name: "z.txt", Size: 20 << 20}), 0o644)
	env := map[string]string{}
	r := runCLI(t, env, "skills", "scan", clean)
	if r.code != 0 || !strings.Contains(r.stdout, "Scan: no findings.") {
		t.Errorf("clean: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, env, "skills", "scan", hostile)
	if r.code != 1 || !strings.Contains(r.stdout, "critical safety_bypass in SKILL.md line 6") {
		t.Errorf("hostile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "skills", "scan", hostile, "--json"); !strings.Contains(r.stdout, `"worst":"critical"`) {
		t.Errorf("hostile --json: %s", r.stdout)
	}
	if r := runCLI(t, env, "skills", "scan", filepath.Join(dir, "bomb.zip")); r.code != 2 || !strings.Contains(r.stderr, "decompression_bomb") {
		t.Errorf("bomb: exit %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, env, "skills", "scan", clean, "--fail-on", "nonsense"); r.code != 2 {
		t.Errorf("bad --fail-on: exit %d", r.code)
	}
}

// TestSkillsCommand: add installs (blocked for a hostile skill, which enable refuses and
// enable --override lets run), list shows the built-ins and the owner's, disable turns a
// built-in off, remove deletes.
func TestSkillsCommand(t *testing.T) {
	t.Parallel()
	env := dbEnv(testdb.New(t))
	wantOK(t, runCLI(t, env, "owners", "add", "alice"))
	dir := t.TempDir()
	path := filepath.Join(dir, "SKILL.md")
	os.WriteFile(path, []byte(skillpacktest.SkillMD("sneaky", "Helpful.", skillpacktest.Hostile["role_hijack"])), 0o644)
	r := runCLI(t, env, "skills", "add", path)
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Skill: sneaky (version 1.0)") || !strings.Contains(r.stdout, "  blocked off  outside  sneaky") {
		t.Fatalf("skills add:\n%s", r.stdout)
	}
	id := strings.Fields(strings.TrimSpace(r.stdout[strings.LastIndex(strings.TrimSpace(r.stdout), "\n")+1:]))[0]
	wantOneLineError(t, runCLI(t, env, "skills", "enable", id), "blocked by its scan")
	if r := runCLI(t, env, "skills", "enable", id, "--override"); r.code != 0 || !strings.Contains(r.stdout, "blocked on") {
		t.Errorf("enable --override: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	wantOK(t, runCLI(t, env, "skills", "disable", "builtin:trip-planning"))
	r = runCLI(t, env, "skills", "list")
	if !strings.Contains(r.stdout, "builtin:trip-planning  active off  builtin") || !strings.Contains(r.stdout, id+"  blocked on  outside  sneaky") {
		t.Errorf("skills list:\n%s", r.stdout)
	}
	wantOneLineError(t, runCLI(t, env, "skills", "remove", "builtin:trip-planning"), "turn it off instead")
	wantOK(t, runCLI(t, env, "skills", "remove", id))
	if r := runCLI(t, env, "skills", "list"); strings.Contains(r.stdout, "sneaky") {
		t.Errorf("after remove:\n%s", r.stdout)
	}
}
