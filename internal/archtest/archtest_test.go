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
// values down. More packages join this list as the redesign (issue 28)
// splits each service into a domain package and a front end beside it.
var domain = []string{
	"internal/azerr",
	"internal/blob",
	"internal/chunk/...",
	"internal/clock",
	"internal/clockctl",
	"internal/cond",
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

// endpoints lists front ends that only parse, call the domain and
// render, and the server under them: they open no transaction, so they
// import no kv package.
var endpoints = []string{
	"internal/datalake",
	"internal/queue/queuerest",
	"internal/table/tablerest",
	// The front door: it recognises a store fault by its Unavailable
	// method, not by kv's error values.
	"internal/server",
}

// TestEndpointsImportNoKV fails if a package of endpoints imports
// internal/kv or a package under it directly (through the domain it
// calls, it may).
func TestEndpointsImportNoKV(t *testing.T) {
	for _, p := range endpoints {
		for _, imp := range directImports(t, module+"/"+p) {
			if imp == module+"/internal/kv" || strings.HasPrefix(imp, module+"/internal/kv/") {
				t.Errorf("%s imports %s: the domain owns the transactions", p, imp)
			}
		}
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

func sortedKeys(m map[string]map[string]bool) []string {
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
