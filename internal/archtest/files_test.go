package archtest

import (
	"encoding/json"
	"errors"
	"fmt"
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

// TestFilesUseEachOtherOneWay type-checks every package of the module
// and fails on a circle of its files, naming the uses that close it: no
// file uses (a name declared in) a file that uses it back, directly or
// through other files of the package, so the files stand in floors, each
// above what it uses. A use is an identifier that refers to a
// package-level name, a method or a field of the package
// (types.Info.Uses), counted for the file that declares it.
func TestFilesUseEachOtherOneWay(t *testing.T) {
	all, err := listExports(module + "/...")
	if err != nil {
		t.Fatal(err)
	}
	checked, used := 0, 0
	for _, path := range sortedKeys(all) {
		l := all[path]
		if !strings.HasPrefix(path, module+"/") && path != module || len(l.GoFiles) < 2 {
			continue
		}
		edges, err := fileUses(path, all)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		checked++
		for _, tos := range edges {
			used += len(tos)
		}
		for _, c := range circles(edges) {
			var ties []string
			for _, a := range c {
				for _, b := range c {
					if names := edges[a][b]; len(names) > 0 {
						ties = append(ties, fmt.Sprintf("%s -> %s (%s)", a, b, strings.Join(names, ", ")))
					}
				}
			}
			t.Errorf("%s: the files %s use each other:\n\t%s", path, strings.Join(c, ", "), strings.Join(ties, "\n\t"))
		}
	}
	// The module has some 40 packages of several files, with hundreds of
	// pairs of files one of which uses the other.
	if checked < 30 || used < 300 {
		t.Fatalf("%d packages checked, %d file uses: the check is blind", checked, used)
	}
	t.Logf("%d packages, %d pairs of files one using the other, no circle", checked, used)
}

// TestFileCircleSeen: the check finds a circle of files where there is
// one, so a clean result above means something. The package is written
// for the test: a.go and b.go use each other, c.go uses a.go one way.
func TestFileCircleSeen(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go": "package p\n\nfunc A() int { return B() + 1 }\n",
		"b.go": "package p\n\ntype T struct{ n int }\n\nfunc B() int { return len(Name) }\n\nvar _ = A\n",
		"c.go": "package p\n\nconst Name = \"c\"\n\nfunc C() int { return A() + T{}.n }\n",
	}
	var names []string
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	all := map[string]listed{"example.com/p": {ImportPath: "example.com/p", Dir: dir, GoFiles: names}}
	edges, err := fileUses("example.com/p", all)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(circles(edges))
	if want := "[[a.go b.go c.go]]"; got != want {
		t.Fatalf("circles = %s, want %s (edges %v)", got, want, edges)
	}
	delete(edges["b.go"], "c.go") // b.go stops using c.go's Name: a.go and b.go remain
	if got, want := fmt.Sprint(circles(edges)), "[[a.go b.go]]"; got != want {
		t.Fatalf("without b.go -> c.go: circles = %s, want %s", got, want)
	}
	delete(edges["b.go"], "a.go")
	if got := circles(edges); len(got) != 0 {
		t.Fatalf("one way only: circles = %v, want none", got)
	}
}

// listed is what go list -export says of a package.
type listed struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
}

// listExports lists pkgs and their dependencies with export data, in one
// go list call.
func listExports(pkgs ...string) (map[string]listed, error) {
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr(err))
	}
	all := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		all[l.ImportPath] = l
	}
	return all, nil
}

// fileUses type-checks the non-test files of pkg against its
// dependencies' export data (listExports) and returns, per file, the
// files it uses and the names it uses there.
func fileUses(pkg string, all map[string]listed) (map[string]map[string][]string, error) {
	self, ok := all[pkg]
	if !ok {
		return nil, fmt.Errorf("go list did not list %s", pkg)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range self.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(self.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		l, ok := all[path]
		if !ok || l.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(l.Export)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	tp, err := (&types.Config{Importer: imp}).Check(pkg, fset, files, info)
	if err != nil {
		return nil, err
	}
	fileOf := func(pos token.Pos) string { return filepath.Base(fset.Position(pos).Filename) }
	sets := map[string]map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != tp || !declaredAtTop(obj, tp) {
			continue
		}
		from, to := fileOf(id.Pos()), fileOf(obj.Pos())
		if from == to || !strings.HasSuffix(to, ".go") {
			continue
		}
		if sets[from] == nil {
			sets[from] = map[string]map[string]bool{}
		}
		if sets[from][to] == nil {
			sets[from][to] = map[string]bool{}
		}
		sets[from][to][id.Name] = true
	}
	edges := map[string]map[string][]string{}
	for from, tos := range sets {
		edges[from] = map[string][]string{}
		for to, names := range tos {
			edges[from][to] = sortedKeys(names)
		}
	}
	return edges, nil
}

// declaredAtTop reports whether obj is a package-level name of tp, a
// method or a struct field (not a local variable, parameter or label).
func declaredAtTop(obj types.Object, tp *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return true
	case *types.Var:
		return o.IsField() || o.Parent() == tp.Scope()
	case *types.TypeName, *types.Const:
		return o.Parent() == tp.Scope()
	}
	return false
}

// circles returns the strongly connected components of more than one
// file (Tarjan), each sorted, in a stable order.
func circles(edges map[string]map[string][]string) [][]string {
	var nodes []string
	for a, tos := range edges {
		nodes = append(nodes, a)
		for b := range tos {
			nodes = append(nodes, b)
		}
	}
	sort.Strings(nodes)
	index, low, on := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for _, w := range sortedKeys(edges[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			if len(c) > 1 {
				sort.Strings(c)
				out = append(out, c)
			}
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// TestFileDomainDoesNotCallUpIntoVFS keeps the open-based API the SMB
// view (internal/smb/smbfs) is built on, internal/file's opens*.go, on
// top of the File domain: no other file of the package uses anything
// opens*.go declares (types, functions, methods, fields, constants), so
// the domain does not depend on what serves SMB. It calls down; nothing
// calls up.
func TestFileDomainDoesNotCallUpIntoVFS(t *testing.T) {
	pkg := module + "/internal/file"
	all, err := listExports(pkg)
	if err != nil {
		t.Fatal(err)
	}
	edges, err := fileUses(pkg, all)
	if err != nil {
		t.Fatal(err)
	}
	isView := func(f string) bool { return strings.HasPrefix(f, "opens") }
	viewUsed := false
	for _, from := range sortedKeys(edges) {
		for _, to := range sortedKeys(edges[from]) {
			if !isView(to) {
				continue
			}
			viewUsed = true
			if !isView(from) {
				t.Errorf("%s uses %s of %s", from, strings.Join(edges[from][to], ", "), to)
			}
		}
	}
	if !viewUsed {
		t.Fatal("nothing of opens*.go is used: the check is blind")
	}
}
