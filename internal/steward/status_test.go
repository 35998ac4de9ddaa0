package steward

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
)

// TestEveryCodeHasAStatus: every Code constant declared in this package has its own row in
// the one table from codes to HTTP statuses (docs/ARCHITECTURE.md §4), read from the source,
// so a code added without a status fails here rather than answering 500 at some face.
func TestEveryCodeHasAStatus(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var codes []Code
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				return false
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: a Code that is not a string literal", vs.Names[0].Name)
					continue
				}
				s, _ := strconv.Unquote(lit.Value)
				codes = append(codes, Code(s))
			}
			return false
		})
	}
	if len(codes) < 10 {
		t.Fatalf("found %d codes in the source; the test no longer reads them", len(codes))
	}
	for _, c := range codes {
		if _, ok := statuses[c]; !ok {
			t.Errorf("code %q has no HTTP status in statuses", c)
		}
	}
	if got := HTTPStatus("no such code"); got != http.StatusInternalServerError {
		t.Errorf("an unknown code is %d, want 500", got)
	}
	if got := HTTPStatus(CodeUnavailable); got != http.StatusServiceUnavailable {
		t.Errorf("unavailable is %d, want 503", got)
	}
}
