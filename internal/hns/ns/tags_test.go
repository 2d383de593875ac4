package ns

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// findTagged runs FindTagged in pages of max and returns "fs/path" of
// every file found.
func (e *env) findTagged(f TagFilter, match func(map[string]string, string) bool, max int) []string {
	e.t.Helper()
	var out []string
	marker := ""
	for {
		var page []TaggedPath
		var next string
		e.view(func(tx kv.Tx) (err error) {
			page, next, err = e.ns.FindTagged(tx, FindTaggedInput{Account: e.fs.Account, Filter: f, Match: match, Marker: marker, Max: max})
			return err
		})
		for _, p := range page {
			out = append(out, p.Filesystem+"/"+p.Path)
		}
		if next == "" {
			slices.Sort(out)
			return out
		}
		marker = next
	}
}

func (e *env) setTags(p string, tags map[string]string) {
	e.t.Helper()
	e.update(func(tx kv.Tx) error {
		_, err := e.ns.SetTags(tx, e.fs, p, tags, nil, nil)
		return err
	})
}

func TestTagIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkfile("a/b/one", "r1")
		e.mkfile("a/b/two", "r2")
		e.mkfile("a/three", "r3")
		e.mkfile("other", "r4")
		e.setTags("a/b/one", map[string]string{"project": "x", "n": "1"})
		e.setTags("a/b/two", map[string]string{"project": "x", "n": "2"})
		e.setTags("a/three", map[string]string{"project": "y"})
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "c/four", MakeParents: true, Tags: map[string]string{"project": "x"}})
			return err
		})
		eq := TagFilter{Key: "project", Op: "=", Value: "x"}
		want := []string{"fs1/a/b/one", "fs1/a/b/two", "fs1/c/four"}
		for _, max := range []int{1, 2, 10} {
			if got := e.findTagged(eq, nil, max); !slices.Equal(got, want) {
				t.Fatalf("max %d: %v, want %v", max, got, want)
			}
		}
		// Every key, each file once.
		if got := e.findTagged(TagFilter{}, nil, 1); len(got) != 4 {
			t.Fatalf("all tagged: %v", got)
		}
		// Ranges.
		if got := e.findTagged(TagFilter{Key: "n", Op: ">", Value: "1"}, nil, 5); !slices.Equal(got, []string{"fs1/a/b/two"}) {
			t.Fatalf("n > 1: %v", got)
		}
		if got := e.findTagged(TagFilter{Key: "n", Op: "<=", Value: "2"}, nil, 5); len(got) != 2 {
			t.Fatalf("n <= 2: %v", got)
		}

		// Renaming the directory above renames what is found.
		e.mkdir("moved")
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: "a", Dest: "moved/z", Mode: Legacy})
			return err
		})
		want = []string{"fs1/c/four", "fs1/moved/z/b/one", "fs1/moved/z/b/two"}
		if got := e.findTagged(eq, nil, 2); !slices.Equal(got, want) {
			t.Fatalf("after rename: %v, want %v", got, want)
		}
		// To another filesystem of the account.
		fs2 := FS{e.fs.Account, "fs2"}
		e.update(func(tx kv.Tx) error {
			if _, err := e.ns.CreateFilesystem(tx, fs2, FilesystemInput{}); err != nil {
				return err
			}
			_, err := e.ns.Rename(tx, fs2, RenameInput{SourceFilesystem: "fs1", Source: "moved/z/b", Dest: "b2"})
			return err
		})
		want = []string{"fs1/c/four", "fs2/b2/one", "fs2/b2/two"}
		if got := e.findTagged(eq, nil, 2); !slices.Equal(got, want) {
			t.Fatalf("after move to fs2: %v, want %v", got, want)
		}
		// New tags replace the old ones in the index.
		e.setTags("c/four", map[string]string{"project": "q"})
		if got := e.findTagged(eq, nil, 5); !slices.Equal(got, want[1:]) {
			t.Fatalf("after retag: %v", got)
		}
		// A replacing create without tags leaves none.
		e.mkfile("c/four", "r5")
		if got := e.findTagged(TagFilter{Key: "project", Op: "=", Value: "q"}, nil, 5); len(got) != 0 {
			t.Fatalf("replaced file still found: %v", got)
		}
		// Match decides on the current tags and the filesystem.
		inFS1 := func(_ map[string]string, fs string) bool { return fs == "fs1" }
		if got := e.findTagged(TagFilter{}, inFS1, 5); !slices.Equal(got, []string{"fs1/moved/z/three"}) {
			t.Fatalf("fs1 only: %v", got)
		}

		// Deleting a directory: nothing under it is found at once; the
		// collector removes the entries.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, fs2, DeleteInput{Path: "b2", Recursive: true})
			return err
		})
		if got := e.findTagged(eq, nil, 5); len(got) != 0 {
			t.Fatalf("after delete: %v", got)
		}
		// A new directory of the same name is not the old one.
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Create(tx, fs2, CreateInput{Path: "b2/one", MakeParents: true})
			return err
		})
		if got := e.findTagged(eq, nil, 5); len(got) != 0 {
			t.Fatalf("after re-create: %v", got)
		}
		// An expired file is not found.
		e.update(func(tx kv.Tx) error {
			x := e.clk.Now().Add(time.Hour)
			_, err := e.ns.Set(tx, e.fs, SetInput{Path: "moved/z/three", Expiry: &x})
			return err
		})
		e.clk.Advance(2 * time.Hour)
		if got := e.findTagged(TagFilter{}, nil, 5); len(got) != 0 {
			t.Fatalf("expired file found: %v", got)
		}
		if _, err := e.ns.Collect(context.Background(), e.store, 3, nil); err != nil {
			t.Fatal(err)
		}
		// Deleting the filesystems leaves nothing once collected.
		e.update(func(tx kv.Tx) error {
			if err := e.ns.DeleteFilesystem(tx, fs2); err != nil {
				return err
			}
			return e.ns.DeleteFilesystem(tx, e.fs)
		})
		if _, err := e.ns.Collect(context.Background(), e.store, 3, nil); err != nil {
			t.Fatal(err)
		}
		e.noKeys(t, "dlt", "dlu")
	})
}

func TestTagsSoftDeleteAndUndelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mkfile("d/f", "r1")
		e.setTags("d/f", map[string]string{"k": "v"})
		eq := TagFilter{Key: "k", Op: "=", Value: "v"}
		del := func(p string) {
			e.update(func(tx kv.Tx) error {
				_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: p, Recursive: true, Retain: 24 * time.Hour})
				return err
			})
		}
		undelete := func(p string) {
			e.update(func(tx kv.Tx) error {
				list, _, err := e.ns.ListDeleted(tx, e.fs, ListDeletedInput{Prefix: p})
				if err != nil {
					return err
				}
				for _, d := range list {
					if d.Path == p {
						_, err = e.ns.Undelete(tx, e.fs, p, d.DeletionID, nil)
						return err
					}
				}
				return fmt.Errorf("%s not deleted", p)
			})
		}
		del("d/f")
		if got := e.findTagged(eq, nil, 5); len(got) != 0 {
			t.Fatalf("soft-deleted file found: %v", got)
		}
		undelete("d/f")
		if got := e.findTagged(eq, nil, 5); !slices.Equal(got, []string{"fs1/d/f"}) {
			t.Fatalf("restored file: %v", got)
		}
		// A soft-deleted directory, restored under a parent that was
		// deleted and made again meanwhile.
		e.mkfile("p/d2/g", "r2")
		e.setTags("p/d2/g", map[string]string{"k": "v"})
		del("p/d2")
		e.update(func(tx kv.Tx) error {
			_, err := e.ns.Delete(tx, e.fs, DeleteInput{Path: "p", Recursive: true})
			return err
		})
		e.mkdir("p")
		undelete("p/d2")
		if got := e.findTagged(eq, nil, 5); !slices.Equal(got, []string{"fs1/d/f", "fs1/p/d2/g"}) {
			t.Fatalf("restored directory: %v", got)
		}
	})
}

// TestRenameCostWithTags: renaming a directory over tagged files costs
// the same whatever it holds; the index is keyed by node id.
func TestRenameCostWithTags(t *testing.T) {
	ops := func(files int) int {
		e := newEnv(t, backends(t)["mem"](t))
		e.update(func(tx kv.Tx) error {
			for i := 0; i < files; i++ {
				if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: fmt.Sprintf("a/dir/f%05d", i), MakeParents: true, Tags: map[string]string{"k": fmt.Sprint(i)}}); err != nil {
					return err
				}
			}
			return nil
		})
		var c countingTx
		e.update(func(tx kv.Tx) error {
			c.Tx = tx
			_, err := e.ns.Rename(&c, e.fs, RenameInput{Source: "a/dir", Dest: "moved"})
			return err
		})
		if got := e.findTagged(TagFilter{Key: "k", Op: "=", Value: "7"}, nil, 5); !slices.Equal(got, []string{"fs1/moved/f00007"}) {
			t.Fatalf("%d files: found %v", files, got)
		}
		return c.reads + c.writes
	}
	small, large := ops(20), ops(2000)
	if small != large {
		t.Fatalf("rename of 20 tagged files: %d key operations, of 2000: %d", small, large)
	}
	t.Logf("rename of a directory above tagged files: %d key operations", small)

	// A rename on no tagged chain reads nothing of the tag index (the
	// node's Up flag says so) and so costs what it did before tags, also
	// when another directory of the filesystem holds tagged files.
	plain := func(tagElsewhere bool) int {
		e := newEnv(t, backends(t)["mem"](t))
		e.update(func(tx kv.Tx) error {
			if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: "a/dir/f", MakeParents: true}); err != nil {
				return err
			}
			if tagElsewhere {
				_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "b/t", MakeParents: true, Tags: map[string]string{"k": "v"}})
				return err
			}
			return nil
		})
		var c countingTx
		e.update(func(tx kv.Tx) error {
			c.Tx = &upReads{Tx: tx, t: t}
			_, err := e.ns.Rename(&c, e.fs, RenameInput{Source: "a/dir", Dest: "moved"})
			return err
		})
		return c.reads + c.writes
	}
	without, with := plain(false), plain(true)
	if without != with || without >= small {
		t.Fatalf("rename of an untagged directory: %d key operations, %d with tagged files elsewhere (above tagged files: %d)", without, with, small)
	}
	t.Logf("rename of a directory above no tagged file: %d key operations", without)
}

// TestFindTaggedAccess: a caller that is not a superuser finds only the
// files it could read (traverse on every directory above, read on the
// file); an empty tag value is a value like any other.
func TestFindTaggedAccess(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		bob := &acl.Principal{User: "bob"}
		e.mkfile("open/f", "r1")
		e.mkfile("open/secret", "r2")
		e.mkfile("closed/g", "r3")
		for _, p := range []string{"open/f", "open/secret", "closed/g"} {
			e.setTags(p, map[string]string{"k": ""})
		}
		e.update(func(tx kv.Tx) error {
			for p, m := range map[string]acl.Mode{"": 0o755, "open": 0o755, "open/f": 0o644, "open/secret": 0o600, "closed": 0o700, "closed/g": 0o644} {
				if _, err := e.ns.Set(tx, e.fs, SetInput{Path: p, Permissions: &m}); err != nil {
					return err
				}
			}
			return nil
		})
		find := func(c Caller) []string {
			var out []string
			e.view(func(tx kv.Tx) error {
				page, _, err := e.ns.FindTagged(tx, FindTaggedInput{Account: e.fs.Account, Filter: TagFilter{Key: "k", Op: "=", Value: ""}, Max: 10, Caller: c})
				for _, p := range page {
					out = append(out, p.Path)
				}
				return err
			})
			slices.Sort(out)
			return out
		}
		if got := find(nil); !slices.Equal(got, []string{"closed/g", "open/f", "open/secret"}) {
			t.Fatalf("superuser: %v", got)
		}
		if got := find(bob); !slices.Equal(got, []string{"open/f"}) {
			t.Fatalf("bob: %v", got)
		}
		// A tag removed leaves no match for its empty value, even through
		// an index entry left behind.
		e.setTags("open/f", map[string]string{"other": "x"})
		f, err := e.lookup("open/f")
		if err != nil {
			t.Fatal(err)
		}
		e.update(func(tx kv.Tx) error { return tx.Put(tagKey(e.fs.Account, "k", "", f.ID), nil) })
		if got := find(nil); !slices.Equal(got, []string{"closed/g", "open/secret"}) {
			t.Fatalf("after retag: %v", got)
		}
	})
}

// TestFindTaggedDuringDirectoryRename finds tagged files while the
// directory holding them is renamed back and forth (and moved between
// filesystems): every page of one transaction holds all of them under
// exactly one of the names.
func TestFindTaggedDuringDirectoryRename(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const files = 200
		fs2 := FS{e.fs.Account, "fs2"}
		e.update(func(tx kv.Tx) error {
			if _, err := e.ns.CreateFilesystem(tx, fs2, FilesystemInput{}); err != nil {
				return err
			}
			for i := 0; i < files; i++ {
				if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: fmt.Sprintf("x/big/f%04d", i), MakeParents: true, Tags: map[string]string{"batch": "one"}}); err != nil {
					return err
				}
			}
			_, err := e.ns.Create(tx, fs2, CreateInput{Path: "y", Dir: true})
			return err
		})
		ctx, cancel := context.WithCancel(context.Background())
		var renamer, finders sync.WaitGroup
		var renames atomic.Int32
		renamer.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				err := e.store.Update(ctx, func(tx kv.Tx) error {
					var err error
					if i%2 == 0 {
						_, err = e.ns.Rename(tx, fs2, RenameInput{SourceFilesystem: "fs1", Source: "x/big", Dest: "y/moved"})
					} else {
						_, err = e.ns.Rename(tx, e.fs, RenameInput{SourceFilesystem: "fs2", Source: "y/moved", Dest: "x/big"})
					}
					return err
				})
				if err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				renames.Add(1)
			}
		})
		for f := 0; f < 2; f++ {
			finders.Go(func() {
				for i := 0; i < 20 || renames.Load() < 3 && i < 2000; i++ {
					var page []TaggedPath
					err := e.store.View(ctx, func(tx kv.Tx) (err error) {
						page, _, err = e.ns.FindTagged(tx, FindTaggedInput{Account: e.fs.Account, Filter: TagFilter{Key: "batch", Op: "=", Value: "one"}, Max: files})
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
					var underX, underY int
					for _, p := range page {
						switch {
						case p.Filesystem == "fs1" && strings.HasPrefix(p.Path, "x/big/"):
							underX++
						case p.Filesystem == "fs2" && strings.HasPrefix(p.Path, "y/moved/"):
							underY++
						}
					}
					if !(underX == files && underY == 0 || underX == 0 && underY == files) {
						t.Errorf("found %d under fs1/x/big and %d under fs2/y/moved", underX, underY)
						return
					}
				}
			})
		}
		finders.Wait()
		cancel()
		renamer.Wait()
		if renames.Load() < 3 {
			t.Fatalf("only %d renames ran", renames.Load())
		}
	})
}

// FuzzFindTaggedMarker: any marker of FindTagged gives a page or 400
// InvalidQueryParameterValue; a page holds only files whose tags match,
// and the next marker always lies after the one given, so paging ends.
func FuzzFindTaggedMarker(f *testing.F) {
	store := mem.New()
	e := newEnv(f, store)
	for i, p := range []string{"d/a", "d/b", "e"} {
		e.mkfile(p, p)
		e.setTags(p, map[string]string{"k": fmt.Sprint(i), "z": "1"})
	}
	var first string
	e.view(func(tx kv.Tx) (err error) {
		_, first, err = e.ns.FindTagged(tx, FindTaggedInput{Account: e.fs.Account, Max: 1})
		return err
	})
	f.Add(first)
	f.Add("")
	f.Add("not base64!")
	f.Add(base64.RawURLEncoding.EncodeToString(kv.Key("dlt", e.fs.Account)))
	f.Add(base64.RawURLEncoding.EncodeToString(kv.Key("dlt", "other")))
	f.Fuzz(func(t *testing.T, marker string) {
		for _, flt := range []TagFilter{{}, {Key: "k", Op: ">=", Value: "1"}, {Key: "z", Op: "=", Value: "1"}} {
			var page []TaggedPath
			var next string
			err := store.View(t.Context(), func(tx kv.Tx) (err error) {
				page, next, err = e.ns.FindTagged(tx, FindTaggedInput{Account: e.fs.Account, Filter: flt, Marker: marker, Max: 1})
				return err
			})
			if err != nil {
				if Code(err) != "InvalidQueryParameterValue" {
					t.Fatalf("%q: %v", marker, err)
				}
				continue
			}
			for _, p := range page {
				if v, ok := p.Node.Tags[flt.Key]; flt.Key != "" && (!ok || v < flt.Value) {
					t.Fatalf("%q: %s found with tags %v for %+v", marker, p.Path, p.Node.Tags, flt)
				}
			}
			if next != "" && marker != "" {
				nk, _ := base64.RawURLEncoding.DecodeString(next)
				mk, _ := base64.RawURLEncoding.DecodeString(marker)
				if string(nk) <= string(mk) {
					t.Fatalf("%q: next marker %q does not advance", marker, next)
				}
			}
		}
	})
}

// upReads fails the test at any read of an up entry of the tag index.
type upReads struct {
	kv.Tx
	t *testing.T
}

func (u *upReads) Get(k []byte) ([]byte, error) {
	if bytes.HasPrefix(k, kv.Key("dlu")) {
		u.t.Errorf("read of the tag index's up entry %q", k)
	}
	return u.Tx.Get(k)
}
