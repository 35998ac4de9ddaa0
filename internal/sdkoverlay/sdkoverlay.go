// Package sdkoverlay prepares the Lambda bootstraps' build (go build -modfile): the Gemini SDK
// with its client.go edited to leave out Application Default Credentials.
//
// genai.NewClient can find Google Cloud credentials on its own (ADC, for the Vertex AI
// backend), and that one path links cloud.google.com/go/auth's credentials and httptransport
// packages, and through them s2a-go, gRPC and protobuf: about 4.9 MB of every bootstrap.
// Steward only ever calls the Gemini API backend with an API key and its own HTTP client
// (internal/llm/gemini), so the edit replaces those calls with an error, leaving every
// other line of the SDK as released. The edits are exact: when an SDK upgrade changes the
// code they apply to, Write fails and says so, rather than building something else.
//
// docs/ARCHITECTURE.md §11 (the Lambda build) explains where this is used.
package sdkoverlay

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Module is the SDK module the overlay edits.
const Module = "google.golang.org/genai"

// noADC is what the removed paths return instead.
const noADC = `fmt.Errorf("genai: Application Default Credentials (Vertex AI) are not built into Steward's Lambda bootstraps; use the Gemini API with an API key")`

// edits are the overlay's changes to client.go: each pattern must match exactly count times.
var edits = []struct {
	name    string
	pattern *regexp.Regexp
	repl    string
	count   int
}{
	{"the credentials import", regexp.MustCompile(`\n\t"cloud\.google\.com/go/auth/credentials"`), "", 1},
	{"the httptransport import", regexp.MustCompile(`\n\t"cloud\.google\.com/go/auth/httptransport"`), "", 1},
	{"credentials.DetectDefault", regexp.MustCompile(`cred, err := credentials\.DetectDefault\(&credentials\.DetectOptions\{(?s:.*?)\}\)`),
		"var cred *auth.Credentials\n\t\terr := " + noADC, 2},
	{"httptransport.NewClient", regexp.MustCompile(`client, err := httptransport\.NewClient\(&httptransport\.Options\{(?s:.*?)\n\t\t\t\}\)`),
		"_ = quotaProjectID\n\t\t\tvar client *http.Client\n\t\t\terr = " + noADC, 1},
	{"httptransport.AddAuthorizationMiddleware", regexp.MustCompile(`err := httptransport\.AddAuthorizationMiddleware\(cc\.HTTPClient, cc\.Credentials\)`),
		"err := " + noADC, 1},
}

// leftover is a use of the removed packages.
var leftover = regexp.MustCompile(`\b(credentials|httptransport)\.[A-Z]`)

// Edit applies the edits to the source of the SDK's client.go.
func Edit(src string) (string, error) {
	for _, e := range edits {
		if n := len(e.pattern.FindAllStringIndex(src, -1)); n != e.count {
			return "", fmt.Errorf("sdkoverlay: %s occurs %d times in %s's client.go, want %d: the SDK changed; update internal/sdkoverlay", e.name, n, Module, e.count)
		}
		src = e.pattern.ReplaceAllLiteralString(src, e.repl)
	}
	if leftover.MatchString(src) {
		return "", fmt.Errorf("sdkoverlay: %s's client.go still uses credentials or httptransport after the edits; update internal/sdkoverlay", Module)
	}
	return src, nil
}

// Write prepares the build in dir: a copy of the SDK module (as the go command in root resolves
// it, without tests and test data) with the edited client.go, and a go.mod for -modfile — the
// module's own plus a replace of the SDK by that copy — next to a copy of go.sum. It returns
// the go.mod's path. (go build -overlay cannot replace files in the module cache.)
func Write(goCmd, root, dir string) (string, error) {
	cmd := exec.Command(goCmd, "list", "-m", "-f", "{{.Dir}}", Module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("sdkoverlay: go list -m %s: %w", Module, err)
	}
	modDir := strings.TrimSpace(string(out))
	if modDir == "" {
		return "", fmt.Errorf("sdkoverlay: %s is not downloaded (go mod download)", Module)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	sdk := filepath.Join(dir, "genai")
	if err := os.RemoveAll(sdk); err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	err = filepath.WalkDir(modDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(modDir, path) // path is under modDir
		switch {
		case d.IsDir() && (d.Name() == "testdata" || d.Name() == "examples"):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(sdk, rel), 0o755)
		case strings.HasSuffix(path, "_test.go"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "client.go" {
			edited, err := Edit(string(b))
			if err != nil {
				return err
			}
			b = []byte(edited)
		}
		return os.WriteFile(filepath.Join(sdk, rel), b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("sdkoverlay: copy %s: %w", Module, err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	mod = append(mod, fmt.Sprintf("\n// Written by internal/sdkoverlay for the Lambda bootstraps.\nreplace %s => %s\n", Module, sdk)...)
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, mod, 0o644); err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return "", fmt.Errorf("sdkoverlay: %w", err)
	}
	return gomod, nil
}
