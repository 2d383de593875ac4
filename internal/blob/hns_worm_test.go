package blob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
)

// TestHNSContainerWORM: a policy and a legal hold on a hierarchical
// account's filesystem (hns_worm.go) refuse, with the flat account's
// codes, every change of a file through the Data Lake and Blob methods
// (overwrite, append and flush, metadata, snapshot, delete, rename, a
// recursive delete of a directory holding one: nothing removed, an
// expiry that would delete it), and allow new files and directories and
// ACL changes; appends pass under allowProtectedAppendWritesAll; once
// the retention has passed a file is deleted and renamed, a directory
// that is not empty is still not deleted, and Delete Container refuses a
// filesystem that holds paths.
func TestHNSContainerWORM(t *testing.T) {
	s, _, _ := hnsEnv(t)
	clk := s.clock.(interface{ Advance(time.Duration) })
	ctx := context.Background()
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	cref := ContainerRef{Account: "acct", Container: "fs"}
	code := func(err error) string {
		t.Helper()
		var e *ns.Error
		if errors.As(err, &e) {
			return e.Code
		}
		return wormCode(t, err)
	}
	want := func(what string, err error, c string) {
		t.Helper()
		if got := code(err); got != c {
			t.Fatalf("%s: %v, want %q", what, err, c)
		}
	}
	create := func(path string, dir bool) error {
		_, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: path, Dir: dir, MakeParents: true}})
		return err
	}
	appendFlush := func(path string, pos int64) (aerr, ferr error) {
		p := PathRef{Account: "acct", Filesystem: "fs", Path: path}
		_, aerr = s.AppendData(ctx, AppendDataInput{PathRef: p, Position: pos, Body: strings.NewReader("abc"), Length: 3})
		_, ferr = s.FlushData(ctx, FlushDataInput{PathRef: p, Position: pos + 3})
		return aerr, ferr
	}
	// Before any setting: d/a is written.
	want("create d/a", create("d/a", false), "")
	aerr, ferr := appendFlush("d/a", 0)
	want("append", aerr, "")
	want("flush", ferr, "")

	if _, err := s.PutContainerPolicy(ctx, Call{}, cref, WORMPolicyInput{Days: 2}, ""); err != nil {
		t.Fatalf("policy on a hierarchical account: %v", err)
	}
	const pol = azerr.BlobImmutableDueToPolicy
	want("create d/b", create("d/b", false), "")
	want("create e/", create("e", true), "")
	want("overwrite d/a", create("d/a", false), pol)
	aerr, ferr = appendFlush("d/a", 3)
	want("append without allowProtectedAppendWritesAll", aerr, pol)
	want("flush without allowProtectedAppendWritesAll", ferr, pol)
	_, err := s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d/a"}})
	want("delete d/a", err, pol)
	_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d", Recursive: true}})
	want("recursive delete of d", err, pol)
	_, err = s.RenamePath(ctx, RenamePathInput{FS: fs, Rename: ns.RenameInput{Source: "d/a", Dest: "z"}})
	want("rename d/a", err, pol)
	_, err = s.RenamePath(ctx, RenamePathInput{FS: fs, Rename: ns.RenameInput{Source: "d", Dest: "e/d"}})
	want("move d", err, pol)
	_, err = s.RenamePath(ctx, RenamePathInput{FS: fs, Rename: ns.RenameInput{Source: "d/b", Dest: "d/a", Mode: ns.Legacy}})
	want("rename onto d/a", err, pol)
	_, err = s.SetBlobMetadata(ctx, SetBlobMetadataInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/a"}, Metadata: map[string]string{"k": "v"}})
	want("Set Blob Metadata", err, pol)
	_, err = s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/a"}})
	want("Snapshot Blob", err, pol)
	_, err = s.DeleteBlob(ctx, DeleteBlobInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/a"}})
	want("Delete Blob", err, pol)
	_, err = s.SetBlobExpiry(ctx, SetBlobExpiryInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/a"}, Option: ExpiryRelativeToNow, Relative: time.Hour})
	want("Set Blob Expiry within the retention", err, pol)
	_, err = s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "x", Expiry: s.clock.Now().Add(time.Hour)}})
	want("Path - Create with an expiry within the retention", err, pol)
	_, err = s.SetBlobExpiry(ctx, SetBlobExpiryInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/b"}, Option: ExpiryRelativeToNow, Relative: 3 * 24 * time.Hour})
	want("Set Blob Expiry past the retention", err, "")
	_, err = s.SetBlobExpiry(ctx, SetBlobExpiryInput{Ref: BlobRef{Account: "acct", Container: "fs", Blob: "d/b"}, Option: ExpiryNever})
	want("Set Blob Expiry never", err, "")
	owner := "00000000-0000-0000-0000-000000000001"
	_, err = s.SetAccessControl(ctx, SetAccessControlInput{FS: fs, Set: ns.SetInput{Path: "d/a", Owner: &owner, KeepVersion: true}})
	want("set owner", err, "")
	if st, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "d/a"}); err != nil || st.Node.Size != 3 {
		t.Fatalf("d/a after the refusals: %+v %v", st, err)
	}
	for _, p := range []string{"d/b", "d"} {
		if _, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: p}); err != nil {
			t.Fatalf("%s after the refused recursive delete: %v", p, err)
		}
	}

	// allowProtectedAppendWritesAll: appends and flushes to a file pass;
	// an overwrite is still refused.
	cur, err := s.GetContainerWORM(ctx, cref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutContainerPolicy(ctx, Call{}, cref, WORMPolicyInput{Days: 2, AppendWritesAll: true}, cur.Policy.ETag); err != nil {
		t.Fatal(err)
	}
	aerr, ferr = appendFlush("d/a", 3)
	want("append with allowProtectedAppendWritesAll", aerr, "")
	want("flush with allowProtectedAppendWritesAll", ferr, "")
	want("overwrite with allowProtectedAppendWritesAll", create("d/a", false), pol)

	// A legal hold: its code first; its own allowProtectedAppendWritesAll.
	if _, err := s.SetContainerLegalHold(ctx, cref, []string{"case1"}, false); err != nil {
		t.Fatal(err)
	}
	const hold = azerr.BlobImmutableDueToLegalHold
	aerr, _ = appendFlush("d/a", 6)
	want("append under a hold without its flag", aerr, hold)
	if _, err := s.SetContainerLegalHold(ctx, cref, []string{"case1"}, true); err != nil {
		t.Fatal(err)
	}
	aerr, ferr = appendFlush("d/a", 6)
	want("append under a hold with its flag", aerr, "")
	want("flush under a hold with its flag", ferr, "")

	// Past the retention, with the hold on: still refused.
	clk.Advance(3 * 24 * time.Hour)
	_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d/a"}})
	want("delete under the hold", err, hold)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: cref}); code(err) != azerr.ContainerHasLegalHold {
		t.Fatalf("Delete Container under a hold: %v", err)
	}
	if _, err := s.ClearContainerLegalHold(ctx, cref, []string{"case1"}); err != nil {
		t.Fatal(err)
	}
	// The hold cleared, the retention passed: a recursive delete of a
	// directory that is not empty stays refused, deletes and renames of
	// files pass, overwrites do not.
	_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d", Recursive: true}})
	want("recursive delete of a non-empty directory under a policy", err, azerr.DirectoryNotEmpty)
	want("overwrite after the retention", create("d/a", false), pol)
	_, err = s.RenamePath(ctx, RenamePathInput{FS: fs, Rename: ns.RenameInput{Source: "d/b", Dest: "e/b"}})
	want("rename after the retention", err, "")
	_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d/a"}})
	want("delete after the retention", err, "")
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: cref}); code(err) != pol {
		t.Fatalf("Delete Container holding paths under an Unlocked policy: %v", err)
	}
	_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: "d", Recursive: true}})
	want("recursive delete of an empty directory", err, "")
	// Emptied (f, made by hnsEnv, is past the retention too), with the
	// policy Locked: only the control plane deletes the filesystem.
	for _, p := range []string{"e/b", "e", "f"} {
		_, err = s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: p}})
		want("delete "+p, err, "")
	}
	cur, err = s.GetContainerWORM(ctx, cref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockContainerPolicy(ctx, Call{}, cref, cur.Policy.ETag); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: cref}); code(err) != azerr.ContainerImmutabilityPolicyLocked {
		t.Fatalf("data plane delete with a Locked policy: %v", err)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: cref, ControlPlane: true}); err != nil {
		t.Fatalf("control plane delete of the empty filesystem: %v", err)
	}
}
