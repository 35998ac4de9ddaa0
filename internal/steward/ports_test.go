package steward_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits of docs/ARCHITECTURE.md §6: a consumer's port is narrow, and so is each of the
// store's repositories.
const (
	maxPortMethods       = 12
	maxRepositoryMethods = 13
)

// parsed is the module's shipped Go code (tests excluded), by package directory.
func parseModule(t *testing.T) map[string][]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel("../..", filepath.Dir(path))
		pkgs[dir] = append(pkgs[dir], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// interfaceSizes counts the methods of every named interface of the module, embedded
// interfaces of the module included ("pkg.Name" keys, pkg the directory's base name).
func interfaceSizes(pkgs map[string][]*ast.File) map[string]int {
	decl := map[string]*ast.InterfaceType{}
	for dir, files := range pkgs {
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						decl[filepath.Base(dir)+"."+ts.Name.Name] = it
					}
				}
				return true
			})
		}
	}
	var count func(pkg string, it *ast.InterfaceType, depth int) int
	count = func(pkg string, it *ast.InterfaceType, depth int) int {
		n := 0
		for _, m := range it.Methods.List {
			if _, ok := m.Type.(*ast.FuncType); ok {
				n += len(m.Names)
				continue
			}
			key := ""
			switch e := m.Type.(type) {
			case *ast.Ident:
				key = pkg + "." + e.Name
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok {
					key = x.Name + "." + e.Sel.Name
				}
			}
			if inner, ok := decl[key]; ok && depth < 5 {
				n += count(strings.Split(key, ".")[0], inner, depth+1)
			} else {
				n++ // an interface from outside the module counts as one
			}
		}
		return n
	}
	sizes := map[string]int{}
	for key, it := range decl {
		sizes[key] = count(strings.Split(key, ".")[0], it, 0)
	}
	return sizes
}

// repositorySizes counts the methods of each of store.Tx's repository types.
func repositorySizes(t *testing.T, files []*ast.File) map[string]int {
	t.Helper()
	repos := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == "Tx" {
				for _, fld := range ts.Type.(*ast.StructType).Fields.List {
					if id, ok := fld.Type.(*ast.Ident); ok && len(fld.Names) == 1 {
						repos[id.Name] = true
					}
				}
			}
			return true
		})
	}
	if len(repos) < 5 {
		t.Fatalf("store.Tx has %d repository fields; the split is gone", len(repos))
	}
	sizes := map[string]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && repos[id.Name] {
				sizes[id.Name]++
			}
		}
	}
	return sizes
}

// TestPortsAreNarrow: every interface of the module has at most maxPortMethods methods, and
// each of the store's repositories at most maxRepositoryMethods: no consumer depends on a
// hub of everything.
func TestPortsAreNarrow(t *testing.T) {
	pkgs := parseModule(t)
	sizes := interfaceSizes(pkgs)
	if sizes["tools.Data"] == 0 {
		t.Fatalf("found no tools.Data port: %v", sizes)
	}
	for name, n := range sizes {
		if n > maxPortMethods {
			t.Errorf("interface %s has %d methods; a port has at most %d", name, n, maxPortMethods)
		}
	}
	for name, n := range repositorySizes(t, pkgs["internal/store"]) {
		if n > maxRepositoryMethods {
			t.Errorf("store repository %s has %d methods; at most %d — split the area", name, n, maxRepositoryMethods)
		}
	}
}
