package sdkoverlay_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/sdkoverlay"
)

// TestWrite: the prepared SDK's client.go parses, imports neither credentials nor
// httptransport, and the go.mod replaces the SDK by that copy.
func TestWrite(t *testing.T) {
	gomod, err := sdkoverlay.Write(goCmd(t), "../..", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(gomod)
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "genai", "client.go"), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); strings.HasSuffix(p, "/credentials") || strings.HasSuffix(p, "/httptransport") {
			t.Errorf("the edited client.go still imports %s", p)
		}
	}
	mod, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	if want := "replace " + sdkoverlay.Module + " => " + filepath.Join(dir, "genai"); !strings.Contains(string(mod), want) {
		t.Errorf("go.mod lacks %q:\n%s", want, mod)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.sum")); err != nil {
		t.Error(err)
	}
}

// TestEditRefusesChangedSDK: when the code an edit applies to is not there as expected (an
// SDK upgrade changed it), Edit fails and names the edit instead of building something else.
func TestEditRefusesChangedSDK(t *testing.T) {
	for _, src := range []string{
		"package genai\n",
		"package genai\nimport (\n\t\"cloud.google.com/go/auth/credentials\"\n\t\"cloud.google.com/go/auth/httptransport\"\n)\n",
	} {
		if _, err := sdkoverlay.Edit(src); err == nil || !strings.Contains(err.Error(), "update internal/sdkoverlay") {
			t.Errorf("Edit(%q) = %v; want an error saying the SDK changed", src, err)
		}
	}
}

func goCmd(t *testing.T) string {
	t.Helper()
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
