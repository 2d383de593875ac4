package file

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomainFilesHaveNoHTTP keeps package file the domain: every file
// takes typed values and returns typed results, so none imports net/http
// or the server front end; parsing and rendering are the REST front
// end's (filerest). internal/archtest checks the same transitively.
func TestDomainFilesHaveNoHTTP(t *testing.T) {
	files, err := filepath.Glob("*.go")
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
					t.Errorf("%s imports %s: package file is the domain and takes no HTTP types", name, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no .go files found")
	}
}
