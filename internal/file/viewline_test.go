package file

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDomainDoesNotCallUpIntoVFS keeps the open-based API the SMB view
// (internal/smb/smbfs) is built on, opens*.go, on top of the domain: no
// other file of the package uses anything opens*.go declares (types,
// functions, methods, fields, constants), so the domain does not depend
// on what serves SMB. It calls down; nothing calls up.
func TestDomainDoesNotCallUpIntoVFS(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: exportImporter(t, fset)}
	if _, err := conf.Check("github.com/cerulean-storage/cerulean/internal/file", fset, files, info); err != nil {
		t.Fatal(err)
	}
	isView := func(p token.Pos) bool {
		return p.IsValid() && strings.HasPrefix(filepath.Base(fset.Position(p).Filename), "opens")
	}
	found := map[string]bool{}
	viewDecls := 0
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != "github.com/cerulean-storage/cerulean/internal/file" {
			continue
		}
		if isView(obj.Pos()) {
			viewDecls++
		}
		if isView(obj.Pos()) && !isView(id.Pos()) {
			at := fset.Position(id.Pos())
			found[filepath.Base(at.Filename)+": "+obj.Name()+" (declared in "+filepath.Base(fset.Position(obj.Pos()).Filename)+")"] = true
		}
	}
	if viewDecls == 0 {
		t.Fatal("nothing of opens*.go is used: the check is blind")
	}
	var msgs []string
	for m := range found {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		t.Error(m)
	}
}

// exportImporter imports the package's dependencies from the export
// data the go command keeps in the build cache (go list -export).
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	export := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			export[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := export[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
}
