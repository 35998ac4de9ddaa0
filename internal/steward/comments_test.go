package steward_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// commentRef matches a qualified name in a comment, as steward.FactKey or agent.Runner.Start:
// a package name, a dot, an exported identifier (a trailing * names a family of constants).
var commentRef = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(\*?)`)

// TestCommentsNameExistingIdentifiers: a comment that names pkg.Name of one of the module's
// packages names something that package declares, so a type that moved (to the leaf, to
// another package) does not leave comments pointing at where it used to be. A file that
// imports a package of another module under the same name (go-message's mail, go-openai's
// openai) is read as naming that one, and is not checked for that name.
func TestCommentsNameExistingIdentifiers(t *testing.T) {
	fset := token.NewFileSet()
	files, declared := parseCommented(t, fset)
	if len(declared["steward"]) < 100 {
		t.Fatalf("found only %d identifiers of internal/steward", len(declared["steward"]))
	}
	for _, f := range files {
		foreign := foreignImports(f)
		for _, group := range f.Comments {
			for _, c := range group.List {
				for _, m := range commentRef.FindAllStringSubmatch(c.Text, -1) {
					pkg, name, family := m[1], m[2], m[3] != ""
					names, ok := declared[pkg]
					if !ok || foreign[pkg] || declares(names, name, family) {
						continue
					}
					t.Errorf("%s: a comment names %s.%s, which package %s does not declare (did it move?)", fset.Position(c.Pos()), pkg, name, pkg)
				}
			}
		}
	}
}

// parseCommented parses every Go file of internal/, cmd/ and functions/ with its comments, and
// lists the identifiers each package name declares in its shipped files.
func parseCommented(t *testing.T, fset *token.FileSet) ([]*ast.File, map[string]map[string]bool) {
	t.Helper()
	var files []*ast.File
	declared := map[string]map[string]bool{}
	for _, top := range []string{"internal", "cmd", "functions"} {
		err := filepath.WalkDir(filepath.Join("..", "..", top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			files = append(files, f)
			if strings.HasSuffix(path, "_test.go") {
				return nil
			}
			if declared[f.Name.Name] == nil {
				declared[f.Name.Name] = map[string]bool{}
			}
			for _, decl := range f.Decls {
				addDeclared(declared[f.Name.Name], decl)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files, declared
}

// TestCommentsCatchAMovedName: the check is not vacuous.
func TestCommentsCatchAMovedName(t *testing.T) {
	names := map[string]bool{"FactKey": true, "Error": true, "FactSourceTurn": true}
	for _, tc := range []struct {
		name   string
		family bool
		want   bool
	}{
		{"FactKey", false, true}, {"Errors", false, true}, {"FactSource", true, true},
		{"FactSource", false, false}, {"ErrorCode", false, false},
	} {
		if got := declares(names, tc.name, tc.family); got != tc.want {
			t.Errorf("declares(%q, family %v) = %v; want %v", tc.name, tc.family, got, tc.want)
		}
	}
}

// addDeclared adds the identifiers one top-level declaration declares.
func addDeclared(names map[string]bool, decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil { // a method is named with its type: store.Store.WithOwner
			names[d.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				names[s.Name.Name] = true
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names[n.Name] = true
				}
			}
		}
	}
}

// declares says whether names holds name, a plural of it (steward.Errors), or with family
// (store.FactSource*) a name it begins.
func declares(names map[string]bool, name string, family bool) bool {
	if names[name] || names[strings.TrimSuffix(name, "s")] {
		return true
	}
	if family {
		for n := range names {
			if strings.HasPrefix(n, name) {
				return true
			}
		}
	}
	return false
}

// foreignImports are the package names f imports from outside the module.
func foreignImports(f *ast.File) map[string]bool {
	foreign := map[string]bool{}
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil || strings.HasPrefix(path, "github.com/stewardhq/steward/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if regexp.MustCompile(`^v[0-9]+$`).MatchString(name) { // a major version suffix
			parent := strings.TrimSuffix(path, "/"+name)
			name = parent[strings.LastIndex(parent, "/")+1:]
		}
		name = strings.TrimPrefix(name, "go-") // github.com/sashabaranov/go-openai is openai
		if imp.Name != nil {
			name = imp.Name.Name
		}
		foreign[name] = true
	}
	return foreign
}
