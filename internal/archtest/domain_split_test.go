package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// domainSplitPackages are the service domain packages that must not
// reach HTTP: each has its REST front end beside it (queuerest,
// tablerest), and the line between them is kept by the compiler's
// import graph, not by file names.
var domainSplitPackages = []string{
	"github.com/cerulean-storage/cerulean/internal/queue",
	"github.com/cerulean-storage/cerulean/internal/table",
}

// domainSplitForbidden are the packages no domain package may import,
// directly or through another package.
var domainSplitForbidden = []string{
	"net/http",
	"github.com/cerulean-storage/cerulean/internal/server",
}

// TestDomainPackagesImportNoHTTP fails if `go list -deps` of a domain
// package (its non-test build) lists net/http or internal/server, and
// names the import path that brings it in.
func TestDomainPackagesImportNoHTTP(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	for _, pkg := range domainSplitPackages {
		out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		importers := map[string][]string{} // forbidden package -> packages importing it
		listed := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			path, imports, _ := strings.Cut(line, ": ")
			listed[path] = true
			for _, imp := range strings.Fields(imports) {
				importers[imp] = append(importers[imp], path)
			}
		}
		if !listed[pkg] {
			t.Fatalf("go list -deps %s did not list the package itself:\n%s", pkg, out)
		}
		for _, bad := range domainSplitForbidden {
			if listed[bad] {
				t.Errorf("%s depends on %s (imported by %s)", pkg, bad, strings.Join(importers[bad], ", "))
			}
		}
	}
}
