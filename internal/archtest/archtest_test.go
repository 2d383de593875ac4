package archtest

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/cerulean-storage/cerulean"

// domain lists the packages below the HTTP line (docs/architecture.md):
// the domain, the byte layer, the kv and chunk stores and what they are
// built from. None may depend on net/http, directly or transitively, or
// on internal/server: the front ends parse requests and pass typed
// values down. A service split into a domain package and a front end
// beside it adds its domain package here.
var domain = []string{
	"internal/azerr",
	"internal/blob",
	"internal/chunk/...",
	"internal/clock",
	"internal/clockctl",
	"internal/cond",
	"internal/copysrc",
	"internal/events",
	"internal/hns/acl",
	"internal/hns/ns",
	"internal/hns/upn",
	"internal/extent",
	"internal/file",
	"internal/file/handle",
	"internal/kv/...",
	"internal/lease",
	"internal/reclaim",
	"internal/svcprops",
	"internal/table/odata",
	"internal/vfs/...",
	"internal/wire",
}

// forbidden are the packages no domain package may depend on.
var forbidden = []string{"net/http", module + "/internal/server"}

// TestDomainHasNoHTTP fails if a package of domain depends on net/http or
// internal/server, naming the chain of imports that leads there.
func TestDomainHasNoHTTP(t *testing.T) {
	pats := make([]string, len(domain))
	for i, p := range domain {
		pats[i] = module + "/" + p
	}
	deps := listDeps(t, pats...)
	for _, p := range pats {
		if !matchesAny(p, deps) {
			t.Errorf("%s matches no package: update the list", p)
		}
	}
	for _, pkg := range sortedKeys(deps) {
		for _, bad := range forbidden {
			if deps[pkg][bad] {
				t.Errorf("%s depends on %s: %s", pkg, bad, strings.Join(chain(t, pkg, bad), " -> "))
			}
		}
	}
}

// composition is the one package that imports both net/http and kv: it
// opens the stores and hands them to the services and their front ends.
const composition = module + "/internal/app"

// TestHTTPPackagesImportNoKV fails if a package that imports net/http
// (a front end, the server under them, an admin endpoint), other than
// composition, imports internal/kv or a package under it directly: the
// front ends parse, call the domain and render, and the domain owns the
// transactions (through the domain they call, they may depend on kv).
// Copies between services pass each other domain readers
// (internal/copysrc), not transactions.
func TestHTTPPackagesImportNoKV(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	front := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == composition {
			continue
		}
		imports := map[string]bool{}
		for _, imp := range f[1:] {
			imports[imp] = true
		}
		if !imports["net/http"] {
			continue
		}
		front++
		for _, imp := range f[1:] {
			if imp == module+"/internal/kv" || strings.HasPrefix(imp, module+"/internal/kv/") {
				t.Errorf("%s imports net/http and %s: the domain owns the transactions", f[0], imp)
			}
		}
	}
	// The front ends of the five services, the server and the admin
	// endpoints: fewer means go list no longer shows them.
	if front < 10 {
		t.Fatalf("only %d packages import net/http: the check is blind", front)
	}
}

// TestNoKVCheckSeesKV: directImports sees internal/kv where it is
// imported (the Blob domain), so a clean result above means something.
func TestNoKVCheckSeesKV(t *testing.T) {
	for _, imp := range directImports(t, module+"/internal/blob") {
		if imp == module+"/internal/kv" {
			return
		}
	}
	t.Fatal("go list does not show internal/blob importing internal/kv: the check is blind")
}

// directImports is the packages pkg imports (its tests excluded).
func directImports(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{range .Imports}}{{.}} {{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	return strings.Fields(string(out))
}

// TestCheckFindsHTTP: the check sees a dependency on net/http where
// there is one (the front door itself), so a clean result above means
// something.
func TestCheckFindsHTTP(t *testing.T) {
	pkg := module + "/internal/server"
	deps := listDeps(t, pkg)
	if !deps[pkg]["net/http"] {
		t.Fatalf("go list -deps of %s does not show net/http: the check is blind", pkg)
	}
	if c := chain(t, pkg, "net/http"); len(c) < 2 || c[0] != pkg || c[len(c)-1] != "net/http" {
		t.Fatalf("chain %v", c)
	}
}

// listDeps returns, for each package matching pats (tests excluded), the
// set of every package it depends on, transitively.
func listDeps(t *testing.T, pats ...string) map[string]map[string]bool {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pats...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	deps := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		set := map[string]bool{}
		for _, d := range f[1:] {
			set[d] = true
		}
		deps[f[0]] = set
	}
	return deps
}

// chain returns a shortest chain of direct imports from pkg to dep.
func chain(t *testing.T, pkg, dep string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			imports[f[0]] = f[1:]
		}
	}
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == dep {
			var c []string
			for ; p != ""; p = prev[p] {
				c = append([]string{p}, c...)
			}
			return c
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return []string{pkg, "?", dep}
}

func matchesAny(pat string, deps map[string]map[string]bool) bool {
	prefix, all := strings.CutSuffix(pat, "/...")
	for pkg := range deps {
		if pkg == pat || all && (pkg == prefix || strings.HasPrefix(pkg, prefix+"/")) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return fmt.Sprint(err)
}
