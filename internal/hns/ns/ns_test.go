package ns

import (
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func TestCreateLookup(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		// Parents must exist unless MakeParents.
		err := e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt"})
			return err
		})
		wantCode(t, err, "PathNotFound")
		f := e.mkfile("a/b/c.txt", "ref1")
		for _, p := range []string{"a", "a/b"} {
			n, err := e.lookup(p)
			if err != nil || !n.Dir {
				t.Fatalf("%s: %v %+v", p, err, n)
			}
		}
		got, err := e.lookup("/a/b/c.txt/")
		if err != nil || got.Dir || string(got.Ref) != "ref1" || got.Size != 4 || got.ETag != f.ETag {
			t.Fatalf("lookup: %v %+v", err, got)
		}
		if !got.Modified.Equal(e.clk.Now()) || got.Owner != acl.Superuser || got.Group != acl.Superuser {
			t.Fatalf("times/owner: %+v", got)
		}
		// The root is a directory.
		if r, err := e.lookup(""); err != nil || !r.Dir {
			t.Fatalf("root: %v %+v", err, r)
		}
		_, err = e.lookup("a/missing")
		wantCode(t, err, "PathNotFound")
		_, err = e.lookup("a//b")
		wantCode(t, err, "InvalidResourceName")
		_, err = e.lookup("a/b/c.txt/d")
		wantCode(t, err, "PathNotFound")

		// If-None-Match: * creates only when absent.
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}})
			return err
		})
		wantCode(t, err, "PathAlreadyExists")
		// If-Match on a missing path, or a stale ETag.
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/new", Cond: cond.Conditions{IfMatch: []string{f.ETag}}})
			return err
		})
		wantCode(t, err, "ConditionNotMet")
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt", Cond: cond.Conditions{IfMatch: []string{`"0x1"`}}})
			return err
		})
		wantCode(t, err, "ConditionNotMet")
		// Another resource type at the path, or a file as a parent.
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt", Dir: true})
			return err
		})
		wantCode(t, err, "PathConflict")
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt/d", MakeParents: true})
			return err
		})
		wantCode(t, err, "PathConflict")

		// Overwriting a file replaces it and sends the old content to the
		// collector; overwriting a directory keeps its children.
		e.clk.Advance(time.Second)
		var out *CreateOutput
		e.update(func(tx kv.Tx) error {
			var err error
			out, err = e.ns.Create(tx, e.fs, CreateInput{Path: "a/b/c.txt", Ref: []byte("ref2"), Cond: cond.Conditions{IfMatch: []string{f.ETag}}})
			return err
		})
		if out.Replaced == nil || string(out.Replaced.Ref) != "ref1" || out.Node.ETag == f.ETag {
			t.Fatalf("replace: %+v", out)
		}
		owner := "someone"
		m := acl.Mode(0o700)
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "a", Owner: &owner, Permissions: &m})
			return err
		})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a", Dir: true, Metadata: map[string]string{"k": "v"}})
			return err
		})
		if !e.exists("a/b/c.txt") {
			t.Fatal("re-creating a directory lost its children")
		}
		if a, _ := e.lookup("a"); a.Owner != owner || a.Permissions() != "rwx------" || a.Metadata["k"] != "v" {
			t.Fatalf("re-created directory: %+v %s", a, a.Permissions())
		}
		if _, err := e.ns.Collect(t.Context(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if reclaimed := e.reclaimed(); len(reclaimed) != 1 || reclaimed["ref1"] != 1 {
			t.Fatalf("reclaimed %v", reclaimed)
		}
	})
}

func TestSetProperties(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		f := e.mkfile("d/f", "r1")
		seen := map[string]bool{f.ETag: true}
		set := func(in SetInput) (*Node, error) {
			var n *Node
			err := e.try(func(tx kv.Tx) error {
				var err error
				n, err = e.ns.Set(tx, e.fs, in)
				return err
			})
			return n, err
		}
		md := map[string]string{"a": "1"}
		props := ContentProps{Type: "text/plain", MD5: []byte{1, 2}}
		for i, in := range []SetInput{
			{Path: "d/f", Metadata: &md},
			{Path: "d/f", Props: &props},
			{Path: "d/f", Content: &Content{Size: 9, Ref: []byte("r2")}},
			{Path: "d", Metadata: &md},
		} {
			e.clk.Advance(time.Second)
			n, err := set(in)
			if err != nil {
				t.Fatalf("%d: %v", i, err)
			}
			if seen[n.ETag] {
				t.Fatalf("%d: ETag %s not new", i, n.ETag)
			}
			seen[n.ETag] = true
			if !n.Modified.Equal(e.clk.Now()) {
				t.Fatalf("%d: modified %v", i, n.Modified)
			}
		}
		got, _ := e.lookup("d/f")
		if got.Metadata["a"] != "1" || got.Props.Type != "text/plain" || got.Size != 9 || string(got.Ref) != "r2" {
			t.Fatalf("%+v", got)
		}
		if !got.Created.Equal(f.Created) {
			t.Fatal("created time changed")
		}
		_, err := set(SetInput{Path: "d/f", Cond: cond.Conditions{IfMatch: []string{f.ETag}}, Metadata: &md})
		wantCode(t, err, "ConditionNotMet")
		_, err = set(SetInput{Path: "d/none", Metadata: &md})
		wantCode(t, err, "PathNotFound")
		_, err = set(SetInput{Path: "d", Content: &Content{Ref: []byte("x")}})
		wantCode(t, err, "PathConflict")
		m := acl.Mode(0o700)
		a, _ := acl.Parse("user::rwx,group::---,other::---")
		_, err = set(SetInput{Path: "d/f", Permissions: &m, ACL: &a})
		wantCode(t, err, "InvalidInput")
		// Permissions keep the sticky bit in x-ms-permissions.
		m = 0o1750
		n, err := set(SetInput{Path: "d", Permissions: &m})
		if err != nil || n.Permissions() != "rwxr-x--T" {
			t.Fatalf("%v %s", err, n.Permissions())
		}
		// The replaced content went to the collector.
		if _, err := e.ns.Collect(t.Context(), e.store, 0, reclaimTx); err != nil {
			t.Fatal(err)
		}
		if reclaimed := e.reclaimed(); len(reclaimed) != 1 || reclaimed["r1"] != 1 {
			t.Fatalf("reclaimed %v", reclaimed)
		}
	})
}

func TestRename(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		rename := func(in RenameInput) (*RenameOutput, error) {
			var out *RenameOutput
			err := e.try(func(tx kv.Tx) error {
				var err error
				out, err = e.ns.Rename(tx, e.fs, in)
				return err
			})
			return out, err
		}
		src := e.mkdir("src")
		e.mkfile("src/x/1", "r1")
		e.mkfile("src/2", "r2")
		e.mkdir("dst")

		out, err := rename(RenameInput{Source: "src", Dest: "dst/moved"})
		if err != nil {
			t.Fatal(err)
		}
		if string(out.Node.ID) != string(src.ID) || out.Node.ETag != src.ETag {
			t.Fatalf("rename changed the node: %+v", out.Node)
		}
		if e.exists("src") || !e.exists("dst/moved/x/1") || !e.exists("dst/moved/2") {
			t.Fatal("subtree did not move")
		}

		cases := []struct {
			name string
			in   RenameInput
			code string
		}{
			{"missing source", RenameInput{Source: "nope", Dest: "x"}, "SourcePathNotFound"},
			{"into itself", RenameInput{Source: "dst", Dest: "dst/moved/deeper"}, "InvalidRenameSourcePath"},
			{"onto itself", RenameInput{Source: "dst/moved", Dest: "dst/moved"}, "InvalidRenameSourcePath"},
			{"root source", RenameInput{Source: "/", Dest: "x"}, "InvalidRenameSourcePath"},
			{"missing dest parent", RenameInput{Source: "dst/moved", Dest: "no/where"}, "RenameDestinationParentPathNotFound"},
			{"file dest parent", RenameInput{Source: "dst/moved/x", Dest: "dst/moved/2/x"}, "InvalidDestinationPath"},
			{"file onto dir", RenameInput{Source: "dst/moved/2", Dest: "dst/moved/x", Mode: Legacy}, "InvalidSourceOrDestinationResourceType"},
			{"dir onto file", RenameInput{Source: "dst/moved/x", Dest: "dst/moved/2"}, "InvalidSourceOrDestinationResourceType"},
			{"dir onto non-empty dir", RenameInput{Source: "dst/moved", Dest: "dst/moved2"}, ""},
			{"source condition", RenameInput{Source: "dst/moved/2", Dest: "z", SourceCond: cond.Conditions{IfMatch: []string{`"0x0"`}}}, "SourceConditionNotMet"},
			{"source if-none-match *", RenameInput{Source: "dst/moved/2", Dest: "z", SourceCond: cond.Conditions{IfNoneMatch: []string{"*"}}}, "SourceConditionNotMet"},
			{"dest if-none-match *", RenameInput{Source: "dst/moved/2", Dest: "dst/moved/x/1", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}}, "PathAlreadyExists"},
			{"dest if-match absent", RenameInput{Source: "dst/moved/2", Dest: "z", Cond: cond.Conditions{IfMatch: []string{"*"}}}, "ConditionNotMet"},
		}
		for _, c := range cases {
			if c.code == "" {
				continue
			}
			_, err := rename(c.in)
			if Code(err) != c.code {
				t.Errorf("%s: %v, want %s", c.name, err, c.code)
			}
		}

		// posix: a file replaces a file; a file or directory renamed onto
		// an existing directory, empty or not, moves into it under its own
		// name (the PathRenameMode description; Hadoop's ABFS driver and
		// contract tests); what is there under that name is then replaced
		// as in legacy mode.
		e.mkfile("p/f1", "a")
		e.mkfile("p/f2", "b")
		out, err = rename(RenameInput{Source: "p/f1", Dest: "p/f2"})
		if err != nil || out.Replaced == nil || string(out.Replaced.Ref) != "b" {
			t.Fatalf("file replace: %v %+v", err, out)
		}
		e.mkdir("p/empty")
		e.mkfile("p/full/f", "c")
		e.mkfile("p/d/inner", "i")
		if out, err := rename(RenameInput{Source: "p/d", Dest: "p/empty"}); err != nil || out.Replaced != nil {
			t.Fatalf("posix dir onto empty dir: %v %+v", err, out)
		}
		if e.exists("p/d") || !e.exists("p/empty/d/inner") {
			t.Fatal("posix: directory not moved into the empty directory")
		}
		if _, err := rename(RenameInput{Source: "p/empty/d", Dest: "p/full"}); err != nil {
			t.Fatal(err)
		}
		if !e.exists("p/full/f") || !e.exists("p/full/d/inner") || e.exists("p/empty/d") {
			t.Fatal("posix: directory not moved into the full directory beside its file")
		}
		if _, err := rename(RenameInput{Source: "p/f2", Dest: "p/full"}); err != nil {
			t.Fatal(err)
		}
		if e.exists("p/f2") || !e.exists("p/full/f2") {
			t.Fatal("posix: file not moved into the directory")
		}
		// The child of that name: a file replaced, a full directory not;
		// the destination conditions apply to the directory named.
		e.mkfile("p/f2", "again")
		if out, err := rename(RenameInput{Source: "p/f2", Dest: "p/full"}); err != nil || out.Replaced == nil || string(out.Replaced.Ref) != "a" {
			t.Fatalf("posix: file onto the child file: %v %+v", err, out)
		}
		e.mkfile("p/d/other", "o")
		_, err = rename(RenameInput{Source: "p/d", Dest: "p/full"})
		wantCode(t, err, "DirectoryNotEmpty")
		_, err = rename(RenameInput{Source: "p/full/d", Dest: "p/full"})
		wantCode(t, err, "InvalidRenameSourcePath")
		// The destination conditions apply to that child: Hadoop's ABFS
		// driver renames with If-None-Match: *.
		_, err = rename(RenameInput{Source: "p/d", Dest: "p/full", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}})
		wantCode(t, err, "PathAlreadyExists")
		if _, err := rename(RenameInput{Source: "p/d", Dest: "p/empty", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}}); err != nil || !e.exists("p/empty/d/other") {
			t.Fatalf("posix, If-None-Match: * onto a directory: %v", err)
		}
		if _, err := rename(RenameInput{Source: "p/empty/d", Dest: "p"}); err != nil {
			t.Fatal(err)
		}
		// A directory renamed onto its own parent would move onto itself.
		_, err = rename(RenameInput{Source: "p/d", Dest: "p"})
		wantCode(t, err, "InvalidRenameSourcePath")
		e.mkdir("p/d2")
		_, err = rename(RenameInput{Source: "p/d2", Dest: "p/full", Mode: Legacy})
		wantCode(t, err, "DirectoryNotEmpty")
		e.mkdir("p/d")
		// legacy (the SDKs' mode): a file replaces a file, a directory an
		// empty directory (azure-sdk-for-net's recorded
		// RenameAsync_DestinationConditions), not a full one.
		_, err = rename(RenameInput{Source: "p/d", Dest: "p/full", Mode: Legacy})
		wantCode(t, err, "DirectoryNotEmpty")
		e.mkdir("p/empty2")
		if _, err := rename(RenameInput{Source: "p/d", Dest: "p/empty2", Mode: Legacy}); err != nil {
			t.Fatal(err)
		}
		if e.exists("p/d") || !e.exists("p/empty2") {
			t.Fatal("legacy directory rename over an empty directory")
		}
		e.mkfile("p/f2", "b")
		e.mkfile("p/f3", "d")
		if _, err := rename(RenameInput{Source: "p/f2", Dest: "p/f3", Mode: Legacy}); err != nil {
			t.Fatal(err)
		}
		if e.exists("p/f2") || !e.exists("p/f3") {
			t.Fatal("legacy file rename")
		}
	})
}

func TestRenameAcrossFilesystems(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		other := FS{e.fs.Account, "fs2"}
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.CreateFilesystem(tx, other, FilesystemInput{})
			return err
		})
		e.mkfile("d/sub/f", "r")
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, other, RenameInput{SourceFilesystem: e.fs.Filesystem, Source: "d", Dest: "moved"})
			return err
		})
		if e.exists("d") {
			t.Fatal("source still there")
		}
		e.view(func(tx kv.Tx) error {
			n, err := e.ns.Lookup(tx, other, "moved/sub/f", nil)
			if err != nil || string(n.Ref) != "r" {
				t.Fatalf("%v %+v", err, n)
			}
			return nil
		})
		// A missing source filesystem.
		err := e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, other, RenameInput{SourceFilesystem: "nofs", Source: "x", Dest: "y"})
			return err
		})
		wantCode(t, err, "FilesystemNotFound")
	})
}

func TestDeleteAndCollect(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		del := func(in DeleteInput) error {
			return e.try(func(tx kv.Tx) error {
				_, err := e.ns.Delete(tx, e.fs, in)
				return err
			})
		}
		refs := map[string]bool{}
		for i := 0; i < 40; i++ {
			r := "ref" + string(rune('A'+i%26)) + string(rune('a'+i/26))
			p := "top/" + []string{"a", "b", "c/d", "c/e/f"}[i%4] + "/" + r
			e.mkfile(p, r)
			refs[r] = true
		}
		e.mkfile("keep/k", "keep")
		wantCode(t, del(DeleteInput{Path: "top"}), "DirectoryNotEmpty")
		wantCode(t, del(DeleteInput{Path: "nope"}), "PathNotFound")
		wantCode(t, del(DeleteInput{Path: "top", Recursive: true, Cond: cond.Conditions{IfMatch: []string{`"0x0"`}}}), "ConditionNotMet")
		wantCode(t, del(DeleteInput{Path: "top", Recursive: true, Cond: cond.Conditions{IfNoneMatch: []string{"*"}}}), "ConditionNotMet")
		if err := del(DeleteInput{Path: "top", Recursive: true}); err != nil {
			t.Fatal(err)
		}
		if e.exists("top") || e.exists("top/a") {
			t.Fatal("still reachable")
		}
		// A new directory of the same name, made before the collector
		// runs, is not touched by it.
		e.mkfile("top/a/new", "new")
		// Collect one step at a time, checking after each (as if the
		// process died there) that what is reachable is intact.
		for steps := 0; ; steps++ {
			var did bool
			e.update(func(tx kv.Tx) error {
				var err error
				did, err = collectStep(tx, 3, reclaimTx)
				return err
			})
			if !e.exists("top/a/new") || !e.exists("keep/k") {
				t.Fatalf("step %d reclaimed something reachable", steps)
			}
			if !did {
				break
			}
			if steps > 1000 {
				t.Fatal("collector does not finish")
			}
		}
		reclaimed := e.reclaimed()
		for r := range refs {
			if reclaimed[r] != 1 {
				t.Errorf("ref %s reclaimed %d times", r, reclaimed[r])
			}
		}
		if len(reclaimed) != len(refs) {
			t.Errorf("reclaimed %d refs, want %d", len(reclaimed), len(refs))
		}
		// Nothing of the old subtree is left in the store: only the
		// records of root's reachable items.
		var records int
		e.view(func(tx kv.Tx) error {
			p := kv.Key("dln", e.fs.Account)
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { records++; return true }); err != nil {
				return err
			}
			g, err := Garbage(tx)
			if g != 0 {
				t.Errorf("%d garbage records left", g)
			}
			return err
		})
		if want := len(e.listAll("", true, 0)); records != want {
			t.Fatalf("%d records, %d reachable", records, want)
		}
		// Deleting the filesystem detaches everything at once.
		e.update(func(tx kv.Tx) error { return e.ns.DeleteFilesystem(tx, e.fs) })
		_, err := e.lookup("keep/k")
		wantCode(t, err, "FilesystemNotFound")
		if _, err := e.ns.Collect(t.Context(), e.store, 0, nil); err != nil {
			t.Fatal(err)
		}
		e.noKeys(t, "dln", "dlr", "dlg")
	})
}

func TestAccessControl(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := &acl.Principal{User: "alice", Groups: []string{"staff"}}
		bob := &acl.Principal{User: "bob"}
		// Root: 0750 owned by $superuser; give alice a home she owns.
		e.mkdir("home")
		owner := "alice"
		e.update(func(tx kv.Tx) error {
			m := acl.Mode(0o755)
			if _, err := e.ns.Set(tx, e.fs, SetInput{Path: "", Permissions: &m}); err != nil {
				return err
			}
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "home", Owner: &owner, Permissions: &m})
			return err
		})
		create := func(c Caller, p string, dir bool) (*Node, error) {
			var n *Node
			err := e.try(func(tx kv.Tx) error {
				out, err := e.ns.Create(tx, e.fs, CreateInput{Path: p, Dir: dir, Caller: c})
				if err == nil {
					n = out.Node
				}
				return err
			})
			return n, err
		}
		f, err := create(alice, "home/a.txt", false)
		if err != nil {
			t.Fatal(err)
		}
		// Owner is the caller, group the parent's, mode 0666 &^ 0027.
		if f.Owner != "alice" || f.Group != acl.Superuser || f.Permissions() != "rw-r-----" {
			t.Fatalf("%+v %s", f, f.Permissions())
		}
		_, err = create(bob, "home/b.txt", false)
		wantCode(t, err, "AuthorizationPermissionMismatch")
		// Bob can traverse and read properties (traverse only).
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Lookup(tx, e.fs, "home/a.txt", bob)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// alice's file is rw-r-----: bob (other) may neither read nor
		// write it, alice may do both.
		for _, want := range []acl.Perm{acl.Read, acl.Write} {
			err = e.try(func(tx kv.Tx) error {
				_, err := e.ns.LookupFor(tx, e.fs, "home/a.txt", bob, want)
				return err
			})
			wantCode(t, err, "AuthorizationPermissionMismatch")
			err = e.try(func(tx kv.Tx) error {
				_, err := e.ns.LookupFor(tx, e.fs, "home/a.txt", alice, want)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// Without x on home, bob cannot even traverse it.
		e.update(func(tx kv.Tx) error {
			m := acl.Mode(0o750)
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "home", Permissions: &m, Caller: alice})
			return err
		})
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Lookup(tx, e.fs, "home/a.txt", bob)
			return err
		})
		wantCode(t, err, "AuthorizationPermissionMismatch")
		// Only the owner (or a superuser) sets the ACL; only a superuser
		// changes the owner.
		err = e.try(func(tx kv.Tx) error {
			m := acl.Mode(0o777)
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "home", Permissions: &m, Caller: bob})
			return err
		})
		wantCode(t, err, "AuthorizationPermissionMismatch")
		err = e.try(func(tx kv.Tx) error {
			o := "bob"
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "home", Owner: &o, Caller: alice})
			return err
		})
		wantCode(t, err, "AuthorizationPermissionMismatch")

		// Sticky bit: in a 1777 directory bob may create, but not delete
		// or rename alice's file; alice may.
		e.update(func(tx kv.Tx) error {
			m := acl.Mode(0o1777)
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "tmp", Dir: true, Permissions: &m, Umask: new(acl.Mode)})
			return err
		})
		if _, err := create(alice, "tmp/a", false); err != nil {
			t.Fatal(err)
		}
		if _, err := create(bob, "tmp/b", false); err != nil {
			t.Fatal(err)
		}
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "tmp/a", Caller: bob})
			return err
		})
		wantCode(t, err, "AuthorizationPermissionMismatch")
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "tmp/a", Dest: "tmp/c", Caller: bob})
			return err
		})
		wantCode(t, err, "AuthorizationPermissionMismatch")
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "tmp/b", Caller: bob})
			return err
		})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "tmp/a", Dest: "tmp/c", Caller: alice})
			return err
		})

		// Listing needs r and x on the directory, and on every
		// subdirectory a recursive listing enters.
		e.update(func(tx kv.Tx) error {
			pub, priv := acl.Mode(0o755), acl.Mode(0o700)
			if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: "pub", Dir: true, Permissions: &pub, Umask: new(acl.Mode)}); err != nil {
				return err
			}
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "pub/priv", Dir: true, Permissions: &priv})
			return err
		})
		list := func(dir string, recursive bool) error {
			return e.store.View(t.Context(), func(tx kv.Tx) error {
				_, err := e.ns.List(tx, e.fs, ListInput{Dir: dir, Recursive: recursive, Caller: bob})
				return err
			})
		}
		if err := list("pub", false); err != nil {
			t.Fatal(err)
		}
		wantCode(t, list("pub", true), "AuthorizationPermissionMismatch")
		wantCode(t, list("pub/priv", false), "AuthorizationPermissionMismatch")

		// Default ACLs are inherited: a directory with a default ACL
		// naming bob gives new files an access ACL naming bob (minus x),
		// new directories both.
		a, err := acl.Parse("user::rwx,group::r-x,other::---,default:user::rwx,default:user:bob:rwx,default:group::r-x,default:other::---")
		if err != nil {
			t.Fatal(err)
		}
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "shared", Dir: true, ACL: &a})
			return err
		})
		sf, err := create(nil, "shared/f", false)
		if err != nil {
			t.Fatal(err)
		}
		if sf.ACL.String() != "user::rw-,user:bob:rwx,group::r-x,mask::rw-,other::---" {
			t.Fatalf("file ACL %s", sf.ACL)
		}
		sd, err := create(nil, "shared/d", true)
		if err != nil {
			t.Fatal(err)
		}
		if sd.ACL.String() != "user::rwx,user:bob:rwx,group::r-x,mask::rwx,other::---,default:user::rwx,default:user:bob:rwx,default:group::r-x,default:mask::rwx,default:other::---" {
			t.Fatalf("dir ACL %s", sd.ACL)
		}
	})
}

// TestCreateReplace: CreateInput.Replace vets only an existing file that
// a create would replace, after the conditions; its error comes back as
// is and the file stays; a new file or a directory never consults it.
func TestCreateReplace(t *testing.T) {
	refuse := errors.New("offline")
	veto := func(old *Node) error {
		if old.Tier == "Archive" {
			return refuse
		}
		return nil
	}
	eachBackend(t, func(t *testing.T, e *env) {
		// A new file: nothing to vet.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d/f", MakeParents: true, Tier: "Archive", Ref: []byte("ref1"), Size: 4, Replace: veto})
			return err
		})
		old, err := e.lookup("d/f")
		if err != nil {
			t.Fatal(err)
		}
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d/f", Ref: []byte("ref2"), Size: 4, Replace: veto})
			return err
		})
		if !errors.Is(err, refuse) {
			t.Fatalf("replace of a vetoed file: %v", err)
		}
		if n, err := e.lookup("d/f"); err != nil || string(n.Ref) != "ref1" || n.ETag != old.ETag {
			t.Fatalf("vetoed file changed: %v %+v", err, n)
		}
		// The conditions come first: If-None-Match * is PathAlreadyExists.
		err = e.try(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d/f", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}, Replace: veto})
			return err
		})
		wantCode(t, err, "PathAlreadyExists")
		// A directory is not vetted (it is kept, not replaced).
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d", Dir: true, Replace: func(*Node) error { return refuse }})
			return err
		})
		// Once the veto passes, the file is replaced.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "d/f", Ref: []byte("ref3"), Size: 4, Replace: func(*Node) error { return nil }})
			return err
		})
		if n, err := e.lookup("d/f"); err != nil || string(n.Ref) != "ref3" {
			t.Fatalf("replaced file: %v %+v", err, n)
		}
	})
}
