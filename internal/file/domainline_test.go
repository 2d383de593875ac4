package file

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomainFilesHaveNoHTTP keeps the line inside package file that its
// file names draw: the domain side (domain_*.go) takes typed values and
// returns typed results, so it imports neither net/http nor the server
// front end; parsing and rendering stay in the handler files.
func TestDomainFilesHaveNoHTTP(t *testing.T) {
	files, err := filepath.Glob("domain_*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"net/http", "github.com/cerulean-storage/cerulean/internal/server", "github.com/cerulean-storage/cerulean/internal/xsm"}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad {
					t.Errorf("%s imports %s: the domain side of package file takes no HTTP types", name, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no domain_*.go files found")
	}
}
