package blob

import (
	"context"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestFlatPaths: on a flat account a directory is a folder marker, the
// blobs named under it, or both. Path - List shows a marker as its
// directory and a name with blobs under it as an implied directory
// (once, not beside its marker); Path - Delete refuses a directory with
// content unless recursive, removes it all when recursive, deletes an
// implied directory's blobs, and finds nothing at an unused name.
func TestFlatPaths(t *testing.T) {
	ctx := context.Background()
	s, _ := dtService(t)
	c := ContainerRef{Account: "acct", Container: "fs"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	put := func(name string, md map[string]string, body string) {
		t.Helper()
		_, err := s.PutBlob(ctx, PutBlobInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: name}, Type: BlockBlob,
			Body: strings.NewReader(body), Length: int64(len(body)), NewBlob: NewBlob{Metadata: md}})
		if err != nil {
			t.Fatal(err)
		}
	}
	folder := map[string]string{"HDI_IsFolder": "TRUE"}
	put("marked", folder, "")
	put("marked/a", nil, "aa")
	put("implied/b", nil, "b")
	put("file", nil, "xyz")
	list := func(prefix string, recursive bool) map[string]FlatPath {
		t.Helper()
		out, err := s.ListFlatPaths(ctx, ListFlatPathsInput{Ref: c, Prefix: prefix, Recursive: recursive, MaxResults: 100})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]FlatPath{}
		for _, p := range out.Paths {
			if _, dup := got[p.Name]; dup {
				t.Fatalf("%q listed twice: %+v", p.Name, out.Paths)
			}
			got[p.Name] = p
		}
		return got
	}
	top := list("", false)
	if len(top) != 3 {
		t.Fatalf("top level: %+v", top)
	}
	if p := top["marked"]; !p.Dir || p.Implied || p.Size != 0 || p.ETag == "" || p.LastModified.IsZero() {
		t.Errorf("marked: %+v", p)
	}
	if p := top["implied"]; !p.Dir || !p.Implied || p.ETag != "" || !p.LastModified.IsZero() {
		t.Errorf("implied: %+v", p)
	}
	if p := top["file"]; p.Dir || p.Size != 3 {
		t.Errorf("file: %+v", p)
	}
	if all := list("", true); len(all) != 4 || all["marked/a"].Size != 2 || all["implied/b"].Dir {
		t.Errorf("recursive: %+v", all)
	}
	del := func(name string, recursive bool) error {
		return s.DeleteFlatPath(ctx, DeleteFlatPathInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: name}, Recursive: recursive})
	}
	if err := del("marked", false); !azerr.Has(err, azerr.DirectoryNotEmpty) {
		t.Fatalf("non-recursive delete of a directory with content: %v", err)
	}
	if err := del("nothing", true); !azerr.Has(err, azerr.PathNotFound) {
		t.Fatalf("delete of nothing: %v", err)
	}
	for _, name := range []string{"marked", "implied", "file"} {
		if err := del(name, true); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	if left := list("", true); len(left) != 0 {
		t.Fatalf("left after deletes: %+v", left)
	}
}
