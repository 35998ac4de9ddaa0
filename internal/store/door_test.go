package store_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stewardhq/steward/internal/store"
)

const (
	storeImport  = "github.com/stewardhq/steward/internal/store"
	dbImport     = "github.com/stewardhq/steward/db"
	testdbImport = "github.com/stewardhq/steward/internal/testdb"
)

// doorKeepers are the only packages (directories, from the module root) allowed to open the
// one door to cross-owner data, store.OpenDoor: the store itself, the composition root, the
// admin CLI, and its remote counterpart on Lambda, the migrate function's handler
// (internal/deployment: `steward remote owners add` as steward_owner, whose secret only that
// function may read). Widening this list is a security review.
var doorKeepers = []string{"internal/store", "internal/app", "cmd/steward", "internal/deployment"}

// TestOneDoor fails if the code of any other package refers to store.OpenDoor. Test files
// and internal/testdb are exempt: they never ship in a binary (TestTestdbOnlyInTests), and
// test harnesses create owners through the door.
func TestOneDoor(t *testing.T) {
	t.Parallel()
	users := map[string][]string{} // directory -> files referring to OpenDoor
	for _, f := range goFiles(t) {
		name, ok := f.imports[storeImport]
		if !ok || strings.HasSuffix(f.path, "_test.go") || f.dir == "internal/testdb" {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr: // store.OpenDoor, or an alias
				if id, ok := n.X.(*ast.Ident); ok && id.Name == name && n.Sel.Name == "OpenDoor" {
					users[f.dir] = append(users[f.dir], f.path)
				}
			case *ast.Ident: // a dot import
				if name == "." && n.Name == "OpenDoor" {
					users[f.dir] = append(users[f.dir], f.path)
				}
			}
			return true
		})
	}
	if len(users["cmd/steward"]) == 0 {
		t.Fatal("found no use of store.OpenDoor in cmd/steward: the scan is broken")
	}
	for dir, files := range users {
		if !slices.Contains(doorKeepers, dir) {
			t.Errorf("%s uses store.OpenDoor (%s); only %v may. Reach owner data through store.WithOwner, or add a reviewed method to door.go used via internal/app",
				dir, strings.Join(slices.Compact(files), ", "), doorKeepers)
		}
	}
}

// TestTestdbOnlyInTests: internal/testdb, which opens the door for test harnesses, never
// ships in a binary: test files import it, and internal/apptest (the tests' builder of
// production's graph), which only test files import in turn.
func TestTestdbOnlyInTests(t *testing.T) {
	t.Parallel()
	const apptestImport = "github.com/stewardhq/steward/internal/apptest"
	for _, f := range goFiles(t) {
		if strings.HasSuffix(f.path, "_test.go") {
			continue
		}
		if _, ok := f.imports[testdbImport]; ok && f.dir != "internal/apptest" {
			t.Errorf("%s imports %s; only _test.go files and internal/apptest may", f.path, testdbImport)
		}
		if _, ok := f.imports[apptestImport]; ok {
			t.Errorf("%s imports %s; only _test.go files may", f.path, apptestImport)
		}
	}
}

// TestOnlyStoreImportsDB: the generated db package never leaves internal/store.
func TestOnlyStoreImportsDB(t *testing.T) {
	t.Parallel()
	for _, f := range goFiles(t) {
		if _, ok := f.imports[dbImport]; ok && f.dir != "internal/store" && f.dir != "db" {
			t.Errorf("%s imports %s; only internal/store may", f.path, dbImport)
		}
	}
}

// goFile is one parsed Go file of the module.
type goFile struct {
	path, dir string            // relative to the module root
	imports   map[string]string // import path -> local name ("." for dot imports)
	ast       *ast.File
}

// goFiles parses every .go file of the module, as the go tool sees them (skipping testdata,
// vendor and directories starting with "." or "_").
func goFiles(t *testing.T) []goFile {
	t.Helper()
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		gf := goFile{path: filepath.ToSlash(rel), dir: filepath.ToSlash(filepath.Dir(rel)), imports: map[string]string{}, ast: f}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			local := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			gf.imports[p] = local
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// moduleRoot is the directory holding go.mod, above the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, door := newDoor(t)
	alice, aliceKey, err := door.CreateOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, bobKey, err := door.CreateOwner(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	spareKey, spare, err := door.AddKey(ctx, alice.ID, "phone")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		key   string
		owner store.Owner
	}{{aliceKey, alice}, {bobKey, bob}, {spareKey, alice}} {
		p, err := door.Authenticate(ctx, tc.key)
		if err != nil || p.OwnerID != tc.owner.ID || p.OwnerName != tc.owner.Name || p.KeyID == [16]byte{} {
			t.Fatalf("Authenticate(%s's key) = %+v, %v", tc.owner.Name, p, err)
		}
	}
	if p, _ := door.Authenticate(ctx, spareKey); p.KeyID != spare.ID {
		t.Fatalf("principal key id = %s, want %s", p.KeyID, spare.ID)
	}

	if err := door.RevokeKey(ctx, alice.ID, spare.ID); err != nil {
		t.Fatal(err)
	}
	if err := door.RevokeKey(ctx, bob.ID, spare.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("bob revoking alice's key: %v, want ErrNotFound", err)
	}
	for name, key := range map[string]string{
		"revoked":          spareKey,
		"unknown":          "stw_" + strings.Repeat("A", 43),
		"empty":            "",
		"no prefix":        strings.TrimPrefix(aliceKey, "stw_"),
		"bearer prefix":    "Bearer " + aliceKey,
		"one char changed": aliceKey[:len(aliceKey)-1] + string(aliceKey[len(aliceKey)-1]^1),
		"too long":         aliceKey + strings.Repeat("x", 300),
		"not utf-8":        "stw_\xff\xfe",
		"sql":              "stw_' OR '1'='1",
	} {
		if p, err := door.Authenticate(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s key: Authenticate = %+v, %v; want ErrNotFound", name, p, err)
		}
	}
	if _, err := door.Authenticate(ctx, aliceKey); err != nil {
		t.Fatalf("revoking the spare key broke alice's first key: %v", err)
	}
}
