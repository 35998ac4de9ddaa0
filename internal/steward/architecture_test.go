package steward_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/stewardhq/steward/"

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listModule runs go list over the whole module (tests excluded: rules are about shipped code).
func listModule(t *testing.T) []pkg {
	t.Helper()
	// Open every Go file, so that go test's cache sees them: a cached pass must not outlive
	// a new import.
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", module+"...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(&out); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	return pkgs
}

// genai is the Gemini SDK, which only its adapter may import (docs/ARCHITECTURE.md §11).
const genai = "google.golang.org/genai"

// modelSDKs are the model providers' SDKs: the provider-neutral retry policy imports none.
var modelSDKs = []string{genai, "github.com/sashabaranov/go-openai", "github.com/openai/openai-go"}

// within reports whether the import path p is pkg or a package under it.
func within(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// TestArchitecture enforces the import rules of docs/ARCHITECTURE.md: the domain package is a
// leaf; the agent loop reaches no database, HTTP face or SDK; only the store imports the
// generated db package; nothing imports a main; only the CLI (and the test databases) use the
// operator's tools; only internal/llm/gemini imports the Gemini SDK, and the retry policy no
// SDK at all; the OpenAI-compatible face imports no store.
func TestArchitecture(t *testing.T) {
	for _, p := range listModule(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			if within(imp, genai) && !within(name, "internal/llm/gemini") {
				t.Errorf("%s imports %s: only internal/llm/gemini may (the Gemini SDK in one adapter, docs/ARCHITECTURE.md §11)", name, imp)
			}
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			switch {
			case name == "internal/steward":
				t.Errorf("internal/steward imports %s: the domain package must be a leaf", dep)
			case dep == "db" && name != "internal/store":
				t.Errorf("%s imports db: only internal/store may", name)
			case strings.HasPrefix(dep, "cmd/") || strings.HasPrefix(dep, "functions/"):
				t.Errorf("%s imports %s: nothing imports a main", name, dep)
			case dep == "internal/admin" && name != "cmd/steward" && name != "internal/testdb":
				t.Errorf("%s imports internal/admin: the operator's tools stay out of the runtime", name)
			case name == "internal/openaiapi" && (dep == "internal/store" || dep == "db"):
				t.Errorf("internal/openaiapi imports %s: a face reads through the ports it declares (docs/ARCHITECTURE.md §7)", dep)
			}
		}
		if name == "internal/llm/retry" {
			for _, dep := range p.Deps {
				for _, sdk := range modelSDKs {
					if within(dep, sdk) {
						t.Errorf("internal/llm/retry depends on %s: the retry policy is provider-neutral; each adapter classifies its SDK's errors", dep)
					}
				}
			}
		}
		if name == "internal/agent" {
			for _, dep := range p.Deps {
				for _, bad := range []string{module + "db", module + "internal/store", module + "internal/httpapi",
					"google.golang.org/genai", "github.com/jackc/pgx", "github.com/aws/", "net/http"} {
					if dep == bad || strings.HasPrefix(dep, bad+"/") || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
						t.Errorf("internal/agent depends on %s: the loop holds no SQL, no HTTP and no SDK", dep)
					}
				}
			}
		}
	}
}

// TestArchitectureCatchesAViolation: the rules above are not vacuous — the module's real
// graph has the edges they are written against.
func TestArchitectureCatchesAViolation(t *testing.T) {
	var store, agent, gemini, openaiapi pkg
	for _, p := range listModule(t) {
		switch p.ImportPath {
		case module + "internal/store":
			store = p
		case module + "internal/agent":
			agent = p
		case module + "internal/llm/gemini":
			gemini = p
		case module + "internal/openaiapi":
			openaiapi = p
		}
	}
	if !slices.Contains(gemini.Imports, genai) {
		t.Fatal("internal/llm/gemini does not import the Gemini SDK: the genai rule checks nothing")
	}
	if openaiapi.ImportPath == "" {
		t.Fatal("no internal/openaiapi: the rule on the OpenAI-compatible face checks nothing")
	}
	if !slices.Contains(store.Imports, module+"db") {
		t.Fatal("internal/store does not import db: the db rule checks nothing")
	}
	if !slices.Contains(agent.Imports, module+"internal/steward") {
		t.Fatal("internal/agent does not import internal/steward")
	}
}

// TestFacesOpenNoTransaction: the faces internal/httpapi, internal/webapp, internal/mcpserver
// and internal/openaiapi only decode, call a service and encode (docs/ARCHITECTURE.md §7).
// None of their shipped files may open an owner transaction (WithOwner, InOwner) or touch a
// store transaction (store.Tx).
func TestFacesOpenNoTransaction(t *testing.T) {
	for _, face := range []struct {
		pkg      string
		minFiles int
	}{{"httpapi", 5}, {"webapp", 3}, {"mcpserver", 1}, {"openaiapi", 3}} {
		files, err := filepath.Glob("../" + face.pkg + "/*.go")
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch name := sel.Sel.Name; {
				case name == "WithOwner" || name == "InOwner":
					t.Errorf("%s uses %s: internal/%s opens no transaction; call a service (docs/ARCHITECTURE.md §7)", fset.Position(sel.Pos()), name, face.pkg)
				case name == "Tx":
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "store" {
						t.Errorf("%s uses store.Tx: internal/%s opens no transaction; call a service (docs/ARCHITECTURE.md §7)", fset.Position(sel.Pos()), face.pkg)
					}
				}
				return true
			})
		}
		if checked < face.minFiles {
			t.Fatalf("found %d non-test files in internal/%s; the check reads nothing", checked, face.pkg)
		}
	}
}
