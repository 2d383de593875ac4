package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/textproto"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFieldNamesCanonical parses every Go file of the module and checks
// each header name written as a literal where no canonicalisation happens:
// the name passed to wire.Field, and the literal index of a map called
// Header when it is read (r.Header["Authorization"]; a client may set a
// field under another spelling on purpose). net/http
// keeps a request's fields under canonical keys
// (textproto.CanonicalMIMEHeaderKey), so a name in any other spelling
// there would never match and the field would read as absent.
func TestFieldNamesCanonical(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		check := func(lit ast.Expr) {
			b, ok := lit.(*ast.BasicLit)
			if !ok || b.Kind != token.STRING {
				return
			}
			name, err := strconv.Unquote(b.Value)
			if err != nil {
				return
			}
			checked++
			if c := textproto.CanonicalMIMEHeaderKey(name); c != name {
				t.Errorf("%s: header name %q is not canonical (%q): it is looked up without folding", fset.Position(b.Pos()), name, c)
			}
		}
		written := map[ast.Expr]bool{} // map entries set, not read
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					written[l] = true
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Field" && len(n.Args) == 2 {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "wire" {
						check(n.Args[1])
					}
				}
			case *ast.IndexExpr:
				if isHeaderMap(n.X) && !written[n] {
					check(n.Index)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d header names found: is the walk reading the module?", checked)
	}
}

// isHeaderMap reports whether e reads as a header map: x.Header or
// x.Header().
func isHeaderMap(e ast.Expr) bool {
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 0 {
		e = c.Fun
	}
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Header"
}
