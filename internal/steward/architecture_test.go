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

// toolset reports whether the package is a toolset: a package under internal/tools/ other than
// the tests' support (toolstest).
func toolset(name string) bool {
	return strings.HasPrefix(name, "internal/tools/") && name != "internal/tools/toolstest"
}

// genai is the Gemini SDK, which only its adapter may import (docs/ARCHITECTURE.md §11).
const genai = "google.golang.org/genai"

// modelSDKs are the model providers' SDKs: the provider-neutral retry policy imports none.
var modelSDKs = []string{genai, "github.com/sashabaranov/go-openai", "github.com/openai/openai-go"}

// within reports whether the import path p is pkg or a package under it.
func within(p, pkg string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }

// TestArchitecture enforces the import rules of docs/ARCHITECTURE.md: the domain package is a
// leaf; the agent loop reaches no database, HTTP face or SDK; only the store imports the
// generated db package; nothing imports a main; only the CLI, the migrate function's
// internal/deployment (and the test databases) use the operator's tools; the tools' framework imports no toolset, no document service and no store,
// toolsets import neither each other nor the store, the ledger service does not import the
// tools, and the web's adapter imports no service;
// only internal/llm/gemini imports the Gemini SDK, and the retry policy no SDK at all; the
// OpenAI-compatible face imports no store.
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
			case name == "internal/tools" && (toolset(dep) || dep == "internal/document" || dep == "internal/store"):
				t.Errorf("internal/tools imports %s: the framework imports no toolset, no document service and no store (docs/ARCHITECTURE.md §1)", dep)
			case toolset(name) && (toolset(dep) || dep == "internal/store" || dep == "db"):
				t.Errorf("%s imports %s: a toolset imports neither another toolset nor the store; it reaches data through the ports of tools.Env or its own (docs/ARCHITECTURE.md §1)", name, dep)
			case name == "internal/ledger" && (dep == "internal/tools" || toolset(dep)):
				t.Errorf("internal/ledger imports %s: the ledger service computes with internal/accounting, not the tools (docs/ARCHITECTURE.md §1)", dep)
			case name == "internal/steward":
				t.Errorf("internal/steward imports %s: the domain package must be a leaf", dep)
			case dep == "db" && name != "internal/store":
				t.Errorf("%s imports db: only internal/store may", name)
			case strings.HasPrefix(dep, "cmd/") || strings.HasPrefix(dep, "functions/"):
				t.Errorf("%s imports %s: nothing imports a main", name, dep)
			case dep == "internal/admin" && name != "cmd/steward" && name != "internal/testdb" && name != "internal/deployment":
				t.Errorf("%s imports internal/admin: the operator's tools stay out of the runtime", name)
			case dep == "internal/deployment" && name != "cmd/steward" && name != "functions/migrate":
				t.Errorf("%s imports internal/deployment: only the migrate function and the CLI run the operator's deploy work (docs/ARCHITECTURE.md §14)", name)
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
		if name == "internal/web" && slices.Contains(p.Deps, module+"internal/store") {
			t.Error("internal/web depends on internal/store: the web's adapter imports no service, only leaves such as internal/doctext (docs/ARCHITECTURE.md §1)")
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
	var store, agent, app, web, gemini, openaiapi pkg
	for _, p := range listModule(t) {
		switch p.ImportPath {
		case module + "internal/store":
			store = p
		case module + "internal/agent":
			agent = p
		case module + "internal/app":
			app = p
		case module + "internal/web":
			web = p
		case module + "internal/llm/gemini":
			gemini = p
		case module + "internal/openaiapi":
			openaiapi = p
		}
	}
	// The toolset rules check something: the composition root registers every toolset, and
	// the web's adapter reads documents through the extraction leaf.
	for _, ts := range []string{"builtin", "ledgertools", "webtools", "doctools"} {
		if !slices.Contains(app.Imports, module+"internal/tools/"+ts) {
			t.Errorf("internal/app does not import the toolset internal/tools/%s: the toolset rules check nothing", ts)
		}
	}
	if !slices.Contains(web.Imports, module+"internal/doctext") || !slices.Contains(app.Deps, module+"internal/store") {
		t.Error("internal/web does not import internal/doctext, or nothing depends on the store: the web rule checks nothing")
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

// TestNoRunnerFieldAssigned: a Runner is built once, by agent.New, and nothing outside
// internal/agent assigns one of its settings afterwards (docs/ARCHITECTURE.md §7): no
// assignment, in any Go file of the module outside internal/agent (tests included), to a
// field of agent.Config through an expression named like a runner (runner, Runner, Agent,
// run, ag). TestRunnerTakesHooksAtConstruction (internal/agent) keeps the hooks unexported.
func TestNoRunnerFieldAssigned(t *testing.T) {
	config := map[string]bool{}
	for _, f := range structFields(t, "../agent/agent.go", "Config") {
		config[f] = true
	}
	if !config["Model"] || !config["Now"] {
		t.Fatalf("read agent.Config's fields %v; the check reads nothing", config)
	}
	runnerNames := map[string]bool{"runner": true, "Runner": true, "Agent": true, "run": true, "ag": true}
	moduleGo(t, "agent", true, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok {
				return true
			}
			for _, lhs := range as.Lhs {
				sel, ok := lhs.(*ast.SelectorExpr)
				if !ok || !config[sel.Sel.Name] {
					continue
				}
				var base string
				switch x := sel.X.(type) {
				case *ast.Ident:
					base = x.Name
				case *ast.SelectorExpr:
					base = x.Sel.Name
				}
				if runnerNames[base] {
					t.Errorf("%s assigns %s.%s after the runner was built: give it to agent.New (docs/ARCHITECTURE.md §7)", fset.Position(sel.Pos()), base, sel.Sel.Name)
				}
			}
			return true
		})
	})
}

// structFields are the names of the fields of the struct type name declared in path.
func structFields(t *testing.T, path, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != name {
			return true
		}
		if st, ok := ts.Type.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				for _, id := range fl.Names {
					out = append(out, id.Name)
				}
			}
		}
		return false
	})
	return out
}

// TestOneClock: a clock is a steward.Clock (docs/ARCHITECTURE.md §9), the one internal/app
// builds and hands on, whose nil value is the system clock. No struct of the module's shipped
// code outside internal/steward has a field of type func() time.Time — the shape each package
// used to carry with a fallback of its own.
func TestOneClock(t *testing.T) {
	moduleGo(t, "steward", false, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fl := range st.Fields.List {
				if isTimeFunc(fl.Type) {
					t.Errorf("%s: a clock field of type func() time.Time; make it a steward.Clock (docs/ARCHITECTURE.md §9)", fset.Position(fl.Pos()))
				}
			}
			return true
		})
	})
}

// isTimeFunc is true for the type expression func() time.Time.
func isTimeFunc(e ast.Expr) bool {
	ft, ok := e.(*ast.FuncType)
	if !ok || (ft.Params != nil && len(ft.Params.List) > 0) || ft.Results == nil || len(ft.Results.List) != 1 {
		return false
	}
	sel, ok := ft.Results.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "time" && sel.Sel.Name == "Time"
}

// TestOnlyAppBuildsServices: internal/app is the one composition root (docs/ARCHITECTURE.md
// §7): no shipped Go file elsewhere — but internal/deployment's scheduler, for the operator's
// schedule commands — builds a service, a runner or a worker of the module — a
// composite literal of a module package's Service, Deliverer, Sweeper, Worker, Webhooks,
// Scheduler, Recorder, Issuer or Hooks, or a call of agent.New. The faces take what they
// call: httpapi.New answers 404 on the routes of a service Deps leaves nil, webapp.Routes
// panics without one it needs. Tests build the same graph with internal/apptest.
func TestOnlyAppBuildsServices(t *testing.T) {
	built := map[string]bool{"Service": true, "Deliverer": true, "Sweeper": true, "Worker": true, "Webhooks": true,
		"Scheduler": true, "Recorder": true, "Issuer": true, "Hooks": true}
	internal, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, d := range internal {
		if d.IsDir() {
			ours[d.Name()] = true
		}
	}
	moduleGo(t, "app", false, func(fset *token.FileSet, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			var sel *ast.SelectorExpr
			switch x := n.(type) {
			case *ast.CompositeLit:
				sel, _ = x.Type.(*ast.SelectorExpr)
				if sel == nil || !built[sel.Sel.Name] {
					return true
				}
			case *ast.CallExpr:
				sel, _ = x.Fun.(*ast.SelectorExpr)
				if sel == nil || sel.Sel.Name != "New" {
					return true
				}
				if p, ok := sel.X.(*ast.Ident); !ok || p.Name != "agent" {
					return true
				}
			default:
				return true
			}
			p, ok := sel.X.(*ast.Ident)
			if !ok || !ours[p.Name] || p.Name == f.Name.Name {
				return true
			}
			// The operator's function is the one other root: it cannot import internal/app
			// (the runtime's whole graph) and builds the scheduler for the schedule commands.
			if p.Name == "autonomy" && filepath.Base(filepath.Dir(fset.Position(sel.Pos()).Filename)) == "deployment" {
				return true
			}
			t.Errorf("%s builds %s.%s: only internal/app builds services; take it as a dependency (docs/ARCHITECTURE.md §7)", fset.Position(sel.Pos()), p.Name, sel.Sel.Name)
			return true
		})
	})
}

// moduleGo parses every Go file of the module outside internal/<skip> — test files too when
// tests is set — and hands each to visit; it fails when it read fewer than 100 files (a check
// that reads nothing).
func moduleGo(t *testing.T, skip string, tests bool, visit func(*token.FileSet, *ast.File)) {
	t.Helper()
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == filepath.Join("../..", "internal", skip) || d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		visit(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("read %d Go files; the check reads nothing", checked)
	}
}

// TestOneWorkSpine: asynchronous work goes through the work spine (internal/work,
// docs/ARCHITECTURE.md §10): only internal/app builds the run queue (awsapi.NewQueue), and
// hands it to the spine; no other shipped package holds an awsapi.Queue to send on, and the
// bespoke message union (RunMessage) and hand-offs are gone for good.
func TestOneWorkSpine(t *testing.T) {
	moduleGo(t, "awsapi", false, func(fset *token.FileSet, f *ast.File) {
		path := filepath.ToSlash(fset.Position(f.Pos()).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				x, ok := n.X.(*ast.Ident)
				if !ok || x.Name != "awsapi" {
					return true
				}
				if n.Sel.Name == "Queue" && !strings.Contains(path, "/internal/work/") {
					t.Errorf("%s: holds an awsapi.Queue; hand work to the work spine (work.Spine.Hand) instead", fset.Position(n.Pos()))
				}
				if n.Sel.Name == "NewQueue" && !strings.Contains(path, "/internal/app/") {
					t.Errorf("%s: builds the run queue outside internal/app; only the work spine sends to it", fset.Position(n.Pos()))
				}
			case *ast.Ident:
				if n.Name == "RunMessage" || n.Name == "processInBackground" || n.Name == "handTelegram" || n.Name == "telegramContinued" {
					t.Errorf("%s: %s is a bespoke hand-off; use the work spine (internal/work)", fset.Position(n.Pos()), n.Name)
				}
			}
			return true
		})
	})
}
