package blob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blobtags"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// Container soft delete of a hierarchical account's containers
// (filesystems): domain_containersd.go.

// csdStores opens the stores of a container soft delete test: those of
// testenv.Stores, or a PostgreSQL schema when $CERULEAN_TEST_POSTGRES is
// set (scripts/with-postgres.sh).
func csdStores(t *testing.T) (kv.Store, chunk.Store, *clock.Fake) {
	t.Helper()
	if os.Getenv(pgtest.EnvVar) == "" {
		return testenv.Stores(t)
	}
	dsn, _ := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	chunks, err := chunk.NewFS(filepath.Join(t.TempDir(), "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	return db, chunks, clock.NewFake(testenv.Epoch)
}

// csdHNS makes s's account "acct" hierarchical, with container soft
// delete of days and Blob soft delete (of paths) for 30 days.
func csdHNS(t *testing.T, s *Service, clk clock.Clock, days int) {
	t.Helper()
	s.SetNamespace(ns.New(clk), func(a string) bool { return a == "acct" })
	s.SetContainerSoftDelete(func(string) int { return days })
	retain := 30
	if _, err := s.props.SetProperties(context.Background(), svcprops.SetPropertiesInput{Account: "acct", Properties: svcprops.Properties{
		DeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &retain}}}); err != nil {
		t.Fatal(err)
	}
}

// csdACL is the ACL of the tree's top directory: a named user, and a
// default ACL its descendants inherit.
const csdACL = "user::rwx,user:11111111-2222-3333-4444-555555555555:r-x,group::r-x,mask::r-x,other::---," +
	"default:user::rwx,default:user:11111111-2222-3333-4444-555555555555:r-x,default:group::r-x,default:mask::r-x,default:other::---"

// csdHNSFill fills filesystem fs with everything a filesystem holds:
// nested directories with an owner, a group and ACLs (inherited, and one
// set on a file), files with content, a tagged file, a file's snapshot,
// an append not yet flushed, an uncommitted block, and soft-deleted paths
// (a file and a directory with a file).
func csdHNSFill(t *testing.T, s *Service, fs ns.FS, files int) {
	t.Helper()
	ctx := context.Background()
	a, err := acl.Parse(csdACL)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(in ns.CreateInput) {
		t.Helper()
		if _, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: in}); err != nil {
			t.Fatalf("create %s: %v", in.Path, err)
		}
	}
	mk(ns.CreateInput{Path: "a", Dir: true, ACL: &a, Owner: "owner-oid", Group: "group-oid"})
	mk(ns.CreateInput{Path: "a/b/c", Dir: true, MakeParents: true})
	ref := func(p string) BlobRef { return BlobRef{Account: fs.Account, Container: fs.Filesystem, Blob: p} }
	for i := 0; i < files; i++ {
		putBlock(t, s, ref(fmt.Sprintf("a/b/c/f%03d", i)), fmt.Sprintf("file %d", i), Access{})
	}
	fa, err := acl.Parse("user::rw-,user:99999999-2222-3333-4444-555555555555:rw-,group::r--,mask::rw-,other::r--")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetAccessControl(ctx, SetAccessControlInput{FS: fs, Set: ns.SetInput{Path: "a/b/c/f000", ACL: &fa}}); err != nil {
		t.Fatal(err)
	}
	body := "tagged"
	if _, err := s.PutBlob(ctx, PutBlobInput{Ref: ref("a/tagged"), Type: BlockBlob, Body: strings.NewReader(body), Length: int64(len(body)),
		NewBlob: NewBlob{Tags: blobtags.Tags{"k": "v"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotBlob(ctx, SnapshotBlobInput{Ref: ref("a/b/c/f001")}); err != nil {
		t.Fatal(err)
	}
	putBlock(t, s, ref("a/b/c/f001"), "file 1 again", Access{})
	mk(ns.CreateInput{Path: "a/app"})
	if _, err := s.AppendData(ctx, AppendDataInput{PathRef: PathRef{Account: fs.Account, Filesystem: fs.Filesystem, Path: "a/app"},
		Body: strings.NewReader("pending"), Length: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlock(ctx, PutBlockInput{Ref: ref("a/staged"), BlockID: "YmxrMQ==", Body: strings.NewReader("staged"), Length: 6}); err != nil {
		t.Fatal(err)
	}
	putBlock(t, s, ref("a/old"), "old", Access{})
	putBlock(t, s, ref("a/olddir/x"), "old x", Access{})
	for _, p := range []string{"a/old", "a/olddir"} {
		d, err := s.DeletePath(ctx, DeletePathInput{FS: fs, Delete: ns.DeleteInput{Path: p, Recursive: true}})
		if err != nil || d.DeletionID == "" {
			t.Fatalf("delete %s: %+v %v (want it soft-deleted)", p, d, err)
		}
	}
}

// csdTree lists fs recursively through the dfs operations: each path
// with its type, owner, group, ACL, size and ETag.
func csdTree(t *testing.T, s *Service, fs ns.FS) []string {
	t.Helper()
	var out []string
	tok := ""
	for {
		page, err := s.ListPaths(context.Background(), ListPathsInput{FS: fs, List: ns.ListInput{Recursive: true, MaxResults: 7, Continuation: tok}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page.Paths {
			out = append(out, fmt.Sprintf("%s dir=%v %s:%s %s size=%d %s", p.Path, p.Node.Dir, p.Owner, p.Group, p.ACL, p.Node.Size, p.Node.ETag))
		}
		if tok = page.Continuation; tok == "" {
			return out
		}
	}
}

// csdOwn are the families a container's records are keyed under by its
// name: blobs, soft-deleted blobs, versions, uncommitted blocks, the
// filesystem's root and its soft-deleted paths.
var csdOwn = []string{"b", "bd", "bv", "u", "dlr", "dld"}

// csdShared are the namespace's families keyed by node id (the tree, the
// contents, pending appends, snapshots, the tag index, the expiry index,
// garbage), which name no container.
var csdShared = []string{"dln", "dlc", "dlp", "dls", "dlu", "dlt", "dlx", "dlg"}

// csdRecords reads the records of container c of acct: own maps each
// record keyed by c's name (csdOwn, and the soft-deleted paths'
// retention index entries) to its value, with c's name left out of the
// key, so the records of a container and of its alias compare; shared
// maps every record of csdShared to its value.
func csdRecords(t *testing.T, store kv.Store, acct, c string) (own, shared map[string]string) {
	t.Helper()
	err := store.View(context.Background(), func(tx kv.Tx) error {
		own, shared = map[string]string{}, map[string]string{}
		for _, fam := range csdOwn {
			p := kv.Key(fam, acct, c)
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
				own[fam+" "+hex.EncodeToString(k[len(p):])] = string(v)
				return true
			}); err != nil {
				return err
			}
		}
		p := kv.Key("dly")
		if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
			f, ok := kv.Split(k)
			if !ok || len(f) != 3 {
				t.Errorf("malformed retention entry %q", k)
				return true
			}
			d, ok := kv.Split([]byte(f[2]))
			if ok && len(d) == 5 && d[1] == acct && d[2] == c {
				own["dly "+f[1]+" "+d[3]+" "+d[4]] = string(v)
			}
			return true
		}); err != nil {
			return err
		}
		for _, fam := range csdShared {
			p := kv.Key(fam)
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, v []byte) bool {
				shared[hex.EncodeToString(k)] = string(v)
				return true
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return own, shared
}

// csdSame fails the test when two record sets differ.
func csdSame(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	var diff []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diff = append(diff, "missing "+k)
		} else if g != v {
			diff = append(diff, "changed "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, "extra "+k)
		}
	}
	slices.Sort(diff)
	t.Fatalf("%s: %d records, want %d: %v", what, len(got), len(want), diff[:min(len(diff), 10)])
}

// csdFamilies counts by family the records of the given families.
func csdFamilies(t *testing.T, store kv.Store, fams ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range fams {
		if n := csdKeys(t, store, f); n > 0 {
			out[f] = n
		}
	}
	return out
}

// findTagged is the "fs/path" of every file Find Blobs by Tags finds
// with k = 'v' in acct.
func findTagged(t *testing.T, s *Service) []string {
	t.Helper()
	e, err := blobtags.ParseWhere(`"k" = 'v'`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.FindBlobsByTags(context.Background(), FindBlobsByTagsInput{Account: "acct", Where: e, MaxResults: 100})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range out.Items {
		names = append(names, it.Container+"/"+it.Name)
	}
	return names
}

// The container soft delete state machine on a hierarchical account:
// Delete Container keeps the filesystem, its tree (directories, files,
// owners, groups, ACLs, contents, snapshots, pending appends, tags) and
// its records named by the container (soft-deleted paths, uncommitted
// blocks) under the alias, exactly those records, values unchanged; the
// name is free for a new filesystem; restore onto it is 409, and once it
// is gone restore brings the whole tree back (listable through the dfs
// operations as it was, the soft-deleted paths restorable, the tagged
// file found again, the container's lease dropped); at expiry the sweep
// reclaims the tree, its soft-deleted paths and their bytes.
func TestContainerSoftDeleteHierarchical(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := csdStores(t)
	s := New(store, chunks, clk, nil)
	csdHNS(t, s, clk, 3)
	c := ContainerRef{Account: "acct", Container: "fs"}
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c, Metadata: map[string]string{"m": "1"}}); err != nil {
		t.Fatal(err)
	}
	csdHNSFill(t, s, fs, 12)
	if _, err := s.ReclaimContainers(ctx); err != nil { // the replaced content's garbage
		t.Fatal(err)
	}
	own, shared := csdRecords(t, store, "acct", "fs")
	if got := csdFamilies(t, store, "dlr", "dld", "dly", "u", "dls", "dlp", "dlu", "dlt"); len(got) != 8 || got["dld"] != 2 || got["dly"] != 2 {
		t.Fatalf("the filled filesystem's records: %v", got)
	}
	tree := csdTree(t, s, fs)
	if len(tree) != 17 || !strings.Contains(tree[0], "owner-oid:group-oid") || !strings.Contains(tree[0], "user:11111111-2222-3333-4444-555555555555:r-x") {
		t.Fatalf("the filled tree: %d paths %v", len(tree), tree)
	}
	held := referenced(t, s)
	if got := findTagged(t, s); len(got) != 1 || got[0] != "fs/a/tagged" {
		t.Fatalf("tagged before the delete: %v", got)
	}
	leaseID := "6f1fa8a4-0b6c-4b0f-8b39-111111111111"
	infinite := -1
	if _, err := s.LeaseContainer(ctx, LeaseContainerInput{Ref: c, Request: lease.Request{Action: lease.ActionAcquire, ProposedID: leaseID, Duration: &infinite}}); err != nil {
		t.Fatal(err)
	}

	err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c})
	wantCode(t, err, 412, azerr.LeaseIDMissing)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c, LeaseID: leaseID}); err != nil {
		t.Fatal(err)
	}
	// Gone at once, from either endpoint and from Find Blobs by Tags.
	_, err = s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	_, err = s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "a/b/c/f003")})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	if _, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "a/b"}); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("a path of the deleted filesystem: %v", err)
	}
	if got := findTagged(t, s); len(got) != 0 {
		t.Fatalf("tagged while deleted: %v", got)
	}
	if _, err := s.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	del := csdDeleted(t, s)
	if len(del) != 1 || del[0].Name != "fs" || del[0].Deleted.RemainingDays != 2 || del[0].Properties.Metadata["m"] != "1" {
		t.Fatalf("deleted %+v", del)
	}
	v1 := del[0].Deleted.Version
	alias := containerAlias("fs", v1)
	// The alias holds exactly the container's records; the tree, keyed
	// by node ids, did not move; no data item changed hands.
	if left, _ := csdRecords(t, store, "acct", "fs"); len(left) != 0 {
		t.Fatalf("%d records left under the name: %v", len(left), slices.Collect(maps.Keys(left)))
	}
	aOwn, aShared := csdRecords(t, store, "acct", alias)
	csdSame(t, "under the alias", aOwn, own)
	csdSame(t, "the tree", aShared, shared)
	if got := referenced(t, s); got != held {
		t.Fatalf("%d data items referenced after the move, want %d", got, held)
	}

	// The name is free: a new filesystem, empty and independent.
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if got := csdTree(t, s, fs); len(got) != 0 {
		t.Fatalf("the new filesystem lists %v", got)
	}
	if _, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "fresh", Dir: true}}); err != nil {
		t.Fatal(err)
	}
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "fs", DeletedVersion: v1})
	wantCode(t, err, 409, azerr.ContainerAlreadyExists)
	clk.Advance(time.Second)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	del = csdDeleted(t, s)
	if len(del) != 2 || del[0].Deleted.Version != v1 {
		t.Fatalf("deleted %+v", del)
	}
	v2 := del[1].Deleted.Version

	// Restore the first: everything is back under the name.
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "fs", DeletedVersion: v1}); err != nil {
		t.Fatal(err)
	}
	back, _ := csdRecords(t, store, "acct", "fs")
	csdSame(t, "restored", back, own)
	if got := csdTree(t, s, fs); !slices.Equal(got, tree) {
		t.Fatalf("restored tree\n%v\nwant\n%v", got, tree)
	}
	p, err := s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	if err != nil || p.Metadata["m"] != "1" || p.Lease.State != "available" {
		t.Fatalf("restored container %+v %v", p, err)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(c, "a/b/c/f007")}); body != "file 7" {
		t.Fatalf("restored file reads %q", body)
	}
	if got := findTagged(t, s); len(got) != 1 || got[0] != "fs/a/tagged" {
		t.Fatalf("tagged after the restore: %v", got)
	}
	bl, err := s.GetBlockList(ctx, GetBlockListInput{Ref: blobAt(c, "a/staged")})
	if err != nil || len(bl.Uncommitted) != 1 {
		t.Fatalf("restored uncommitted blocks %+v %v", bl, err)
	}
	if err := s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: blobAt(c, "a/olddir")}); err != nil {
		t.Fatal(err)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(c, "a/olddir/x")}); body != "old x" {
		t.Fatalf("undeleted file reads %q", body)
	}
	if _, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "fresh"}); !errors.Is(err, ns.ErrPathNotFound) {
		t.Fatalf("the other version's directory in the restored filesystem: %v", err)
	}
	if del = csdDeleted(t, s); len(del) != 1 || del[0].Deleted.Version != v2 {
		t.Fatalf("deleted after restore %+v", del)
	}

	// Expiry: v2 is neither listed nor restorable after 3 days; deleted
	// again, v1 expires too, and the sweep reclaims every record of both
	// and the data they held.
	clk.Advance(3*24*time.Hour + time.Minute)
	if del = csdDeleted(t, s); len(del) != 0 {
		t.Fatalf("expired version listed: %+v", del)
	}
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "fs", DeletedVersion: v2})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := s.ReclaimContainers(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := csdKeys(t, store, "dlr"); got != 1 {
		t.Fatalf("%d filesystem roots after v2's expiry, want v1's", got)
	}
	clk.Advance(3*24*time.Hour + time.Minute)
	for i := 0; i < 3; i++ {
		if _, err := s.ReclaimContainers(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := referenced(t, s); got != 0 {
		t.Fatalf("%d data items still referenced", got)
	}
	if left := csdFamilies(t, store, slices.Concat([]string{"dly", "cx", "cm", "rcl", "c"}, csdOwn, csdShared)...); len(left) != 0 {
		t.Fatalf("records left: %v", left)
	}
}

// csdManyDeleted soft-deletes n empty files of fs, made and deleted in
// two transactions.
func csdManyDeleted(t *testing.T, s *Service, fs ns.FS, n int) {
	t.Helper()
	ctx := context.Background()
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			if _, err := s.hns.Create(tx, fs, ns.CreateInput{Path: fmt.Sprintf("many/m%04d", i), MakeParents: true}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.store.Update(ctx, func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			if _, err := s.hns.Delete(tx, fs, ns.DeleteInput{Path: fmt.Sprintf("many/m%04d", i), Retain: 30 * 24 * time.Hour}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A hierarchical container's move stopped midway is finished by the
// sweep of a process started later over the same store: a delete's (the
// filesystem is gone from its name from the delete's transaction on, and
// the name is busy until the move ends), then a restore's (the
// filesystem is back only with the move's last transaction).
func TestContainerSoftDeleteHierarchicalInterruptedMove(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := csdStores(t)
	cs := &countingStore{Store: store}
	s := New(cs, chunks, clk, nil)
	csdHNS(t, s, clk, 7)
	c := ContainerRef{Account: "acct", Container: "fs"}
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	csdHNSFill(t, s, fs, 3)
	csdManyDeleted(t, s, fs, 700) // more than the delete's inline move transaction takes
	if _, err := s.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	own, shared := csdRecords(t, store, "acct", "fs")
	tree := csdTree(t, s, fs)

	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if left, _ := csdRecords(t, store, "acct", "fs"); len(left) == 0 || len(left) == len(own) {
		t.Fatalf("%d of %d records under the name: want a move in progress", len(left), len(own))
	}
	if _, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "a"}); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("a path of the filesystem being moved: %v", err)
	}
	_, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
	v := csdDeleted(t, s)[0].Deleted.Version
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "fs", DeletedVersion: v})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)

	s2 := New(store, chunks, clk, nil)
	csdHNS(t, s2, clk, 7)
	if _, err := s2.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	aOwn, aShared := csdRecords(t, store, "acct", containerAlias("fs", v))
	csdSame(t, "under the alias", aOwn, own)
	csdSame(t, "the tree", aShared, shared)

	// The restore: stop it after two of its move transactions.
	errStop := errors.New("stopped")
	updates := 0
	cs.before = func(int) error {
		if updates++; updates > 3 {
			return errStop
		}
		return nil
	}
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "fs", DeletedVersion: v}); !errors.Is(err, errStop) {
		t.Fatalf("restore: %v, want it stopped", err)
	}
	_, err = s2.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	if _, err := s2.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: "a"}); !errors.Is(err, ns.ErrFilesystemNotFound) {
		t.Fatalf("a path of the filesystem being restored: %v", err)
	}
	if del := csdDeleted(t, s2); len(del) != 0 {
		t.Fatalf("a container under restore is listed: %+v", del)
	}
	if _, err := s2.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	back, _ := csdRecords(t, store, "acct", "fs")
	csdSame(t, "restored", back, own)
	if got := csdTree(t, s2, fs); !slices.Equal(got, tree) {
		t.Fatalf("restored tree\n%v\nwant\n%v", got, tree)
	}
	if _, body := readBlob(t, s2, GetBlobInput{Ref: blobAt(c, "a/b/c/f002")}); body != "file 2" {
		t.Fatalf("restored file reads %q", body)
	}
}

// A container deleted while its account was flat and restored once the
// account is hierarchical becomes a filesystem with a root of its own,
// as Create Container would make it; one deleted while hierarchical
// keeps its tree.
func TestContainerSoftDeleteLayoutChange(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := csdStores(t)
	s := New(store, chunks, clk, nil)
	hier := false
	s.SetNamespace(ns.New(clk), func(string) bool { return hier })
	s.SetContainerSoftDelete(func(string) int { return 7 })
	c := ContainerRef{Account: "acct", Container: "c"}
	fs := ns.FS{Account: "acct", Filesystem: "c"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	v := csdDeleted(t, s)[0].Deleted.Version
	hier = true
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "c", DeletedVersion: v}); err != nil {
		t.Fatal(err)
	}
	st, err := s.GetPathStatus(ctx, GetPathStatusInput{FS: fs, Path: ""})
	if err != nil || !st.Node.Dir {
		t.Fatalf("the restored container's root: %+v %v", st, err)
	}
	if _, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "d/f", MakeParents: true}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	v = csdDeleted(t, s)[0].Deleted.Version
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "c", DeletedVersion: v}); err != nil {
		t.Fatal(err)
	}
	if got := csdTree(t, s, fs); len(got) != 2 || !strings.HasPrefix(got[0], "d dir=true") || !strings.HasPrefix(got[1], "d/f dir=false") {
		t.Fatalf("the restored tree %v", got)
	}
	if n := csdKeys(t, store, "dlr"); n != 1 {
		t.Fatalf("%d filesystem roots, want the restored one", n)
	}
}
