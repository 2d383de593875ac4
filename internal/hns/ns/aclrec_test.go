package ns

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func TestSetACLRecursive(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		for _, p := range []string{"t/a/1", "t/a/2", "t/b/c/3", "t/4"} {
			e.mkfile(p, p)
		}
		run := func(in SetACLRecursiveInput) *SetACLRecursiveOutput {
			t.Helper()
			total := &SetACLRecursiveOutput{}
			for calls := 0; ; calls++ {
				var out *SetACLRecursiveOutput
				e.update(func(tx kv.Tx) error {
					var err error
					out, err = e.ns.SetACLRecursive(tx, e.fs, in)
					return err
				})
				total.DirsSuccessful += out.DirsSuccessful
				total.FilesSuccessful += out.FilesSuccessful
				total.FailureCount += out.FailureCount
				total.FailedEntries = append(total.FailedEntries, out.FailedEntries...)
				if out.Continuation == "" {
					return total
				}
				if calls > 100 {
					t.Fatal("no end")
				}
				in.Continuation = out.Continuation
			}
		}
		set, _ := acl.Parse("user::rwx,group::r-x,other::---,default:user::rwx,default:group::r-x,default:other::---")
		for _, max := range []int{0, 1, 2, 5} {
			out := run(SetACLRecursiveInput{Path: "t", Mode: ACLSet, ACL: set, MaxRecords: max})
			// t, t/a, t/b, t/b/c are directories; four files.
			if out.DirsSuccessful != 4 || out.FilesSuccessful != 4 || out.FailureCount != 0 {
				t.Fatalf("max %d: %+v", max, out)
			}
		}
		d, _ := e.lookup("t/b/c")
		f, _ := e.lookup("t/b/c/3")
		if d.ACL.String() != set.String() || f.ACL.String() != "user::rwx,group::r-x,other::---" {
			t.Fatalf("dir %s file %s", d.ACL, f.ACL)
		}
		mod, _ := acl.ParseEntries("user:u1:r-x,default:user:u1:r-x")
		run(SetACLRecursiveInput{Path: "t", Mode: ACLModify, Entries: mod, MaxRecords: 3})
		f, _ = e.lookup("t/a/1")
		if f.ACL.String() != "user::rwx,user:u1:r-x,group::r-x,mask::r-x,other::---" {
			t.Fatalf("modified file %s", f.ACL)
		}
		rm, _ := acl.ParseRemoveList("user:u1,default:user:u1")
		run(SetACLRecursiveInput{Path: "t", Mode: ACLRemove, Entries: rm})
		d, _ = e.lookup("t/a")
		if d.ACL.String() != "user::rwx,group::r-x,mask::r-x,other::---,default:user::rwx,default:group::r-x,default:mask::r-x,default:other::---" {
			t.Fatalf("removed dir %s", d.ACL)
		}
		// A single file, and the root.
		if out := run(SetACLRecursiveInput{Path: "t/4", Mode: ACLSet, ACL: set}); out.FilesSuccessful != 1 || out.DirsSuccessful != 0 {
			t.Fatalf("file: %+v", out)
		}
		if out := run(SetACLRecursiveInput{Path: "/", Mode: ACLSet, ACL: set, MaxRecords: 1}); out.DirsSuccessful != 5 || out.FilesSuccessful != 4 {
			t.Fatalf("root: %+v", out)
		}
		// A bearer caller owning only some items: without forceFlag it
		// stops at the first failure, with it it counts them and goes on.
		alice := &acl.Principal{User: "alice"}
		owner := "alice"
		e.update(func(tx kv.Tx) error {
			m := acl.Mode(0o751) // others may traverse the root
			if _, err := e.ns.Set(tx, e.fs, SetInput{Path: "", Permissions: &m}); err != nil {
				return err
			}
			for _, p := range []string{"t", "t/a", "t/a/1"} {
				if _, err := e.ns.Set(tx, e.fs, SetInput{Path: p, Owner: &owner}); err != nil {
					return err
				}
			}
			return nil
		})
		out := run(SetACLRecursiveInput{Path: "t", Mode: ACLSet, ACL: set, Caller: alice})
		if out.DirsSuccessful != 1 || out.FilesSuccessful != 0 || out.FailureCount != 1 || out.FailedEntries[0].Name != "t/4" {
			t.Fatalf("no force: %+v", out)
		}
		out = run(SetACLRecursiveInput{Path: "t", Mode: ACLSet, ACL: set, Caller: alice, ForceFlag: true, MaxRecords: 2})
		// t/4, t/a/2 and t/b fail; t/b's subtree cannot be reached.
		if out.DirsSuccessful != 2 || out.FilesSuccessful != 1 || out.FailureCount != 3 {
			t.Fatalf("force: %+v", out)
		}
		// Bad input.
		rm, _ = acl.ParseRemoveList("user:")
		err := e.try(func(tx kv.Tx) error {
			_, err := e.ns.SetACLRecursive(tx, e.fs, SetACLRecursiveInput{Path: "t", Mode: ACLRemove, Entries: rm})
			return err
		})
		wantCode(t, err, "InvalidInput")
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.SetACLRecursive(tx, e.fs, SetACLRecursiveInput{Path: "t", Continuation: encodeContinuation("elsewhere/x")})
			return err
		})
		wantCode(t, err, "InvalidQueryParameterValue")
	})
}
