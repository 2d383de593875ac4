package blob

import (
	"context"
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
)

// TestDFSPathMethods drives the Data Lake path operations through the
// Blob domain's methods alone, with no HTTP: create a directory and a
// file in it, rename the directory, list and look up the moved file,
// change its owner, answer an unknown recursive-ACL continuation with
// zero counts, delete the directory recursively (for good: soft delete is
// off), after which the file is gone.
func TestDFSPathMethods(t *testing.T) {
	s, _, _ := hnsEnv(t)
	ctx := context.Background()
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	if _, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "d", Dir: true}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "d/x"}})
	if err != nil || c.Node == nil || c.Node.Dir || c.Node.ETag == "" {
		t.Fatalf("CreatePath d/x: %+v, %v", c, err)
	}
	rn, err := s.RenamePath(ctx, RenamePathInput{FS: fs, Rename: ns.RenameInput{SourceFilesystem: "fs", Source: "d", Dest: "e"}})
	if err != nil || rn.Node == nil || !rn.Node.Dir {
		t.Fatalf("RenamePath: %+v, %v", rn, err)
	}
	l, err := s.ListPaths(ctx, ListPathsInput{FS: fs, List: ns.ListInput{Dir: "e", Recursive: true}})
	if err != nil || len(l.Paths) != 1 || l.Paths[0].Path != "e/x" || l.Paths[0].Owner == "" || l.Continuation != "" {
		t.Fatalf("ListPaths e: %+v, %v", l, err)
	}
	owner := "00000000-0000-0000-0000-000000000001"
	if _, err := s.SetAccessControl(ctx, SetAccessControlInput{FS: fs, Set: ns.SetInput{Path: "e/x", Owner: &owner, KeepVersion: true}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "e/x"})
	if err != nil || st.Owner != owner || st.Node.ETag != c.Node.ETag {
		t.Fatalf("GetPathStatus e/x: %+v, %v (want owner %s, ETag %s kept)", st, err, owner, c.Node.ETag)
	}
	a, err := acl.Parse("user::rwx,group::r-x,other::---")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.SetAccessControlRecursive(ctx, SetAccessControlRecursiveInput{FS: fs, Change: ns.SetACLRecursiveInput{Path: "e", Mode: ns.ACLSet, ACL: a, Continuation: "garbage"}})
	if err != nil || r.Result.DirsSuccessful != 0 || r.Result.FilesSuccessful != 0 || r.Result.Continuation != "" {
		t.Fatalf("SetAccessControlRecursive with an unknown continuation: %+v, %v", r, err)
	}
	d, err := s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "e", Recursive: true}})
	if err != nil || d.DeletionID != "" {
		t.Fatalf("DeletePath e: %+v, %v", d, err)
	}
	if _, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "e/x"}); !errors.Is(err, ns.ErrPathNotFound) {
		t.Fatalf("GetPathStatus after delete: %v, want PathNotFound", err)
	}
}
