package blob

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// csdCount is the number of records of container c of acct under the
// blob, soft-deleted, version and uncommitted-block prefixes, and of its
// expiry index entries.
func csdCount(t *testing.T, store kv.Store, acct, c string) (records, expiries int) {
	t.Helper()
	err := store.View(context.Background(), func(tx kv.Tx) error {
		records, expiries = 0, 0
		for _, ns := range []string{"b", "bd", "bv", "u"} {
			p := kv.Key(ns, acct, c)
			if err := tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { records++; return true }); err != nil {
				return err
			}
		}
		p := kv.Key("bx")
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(k, _ []byte) bool {
			if f, ok := kv.Split(k); ok && len(f) == 6 && f[2] == acct && f[3] == c {
				expiries++
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return records, expiries
}

// csdDeleted lists the deleted containers of acct.
func csdDeleted(t *testing.T, s *Service) []ListedContainer {
	t.Helper()
	out, err := s.ListContainers(context.Background(), ListContainersInput{Account: "acct", MaxResults: 100, Deleted: true})
	if err != nil {
		t.Fatal(err)
	}
	var del []ListedContainer
	for _, it := range out.Items {
		if it.Deleted != nil {
			del = append(del, it)
		}
	}
	return del
}

// csdFill fills c (fillContainer) and adds a soft-deleted blob and a
// previous version, so that every kind of record a container holds is
// there.
func csdFill(t *testing.T, s *Service, c ContainerRef, n int) {
	t.Helper()
	ctx := context.Background()
	fillContainer(t, s, c, n)
	if _, err := s.SetContainerMetadata(ctx, SetContainerMetadataInput{Ref: c, Metadata: map[string]string{"m": "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: blobAt(c, "b00001")}); err != nil {
		t.Fatal(err)
	}
	s.SetVersioning(func(string) bool { return true })
	putBlock(t, s, blobAt(c, "b00002"), "second", Access{})
	putBlock(t, s, blobAt(c, "b00002"), "third", Access{})
	s.SetVersioning(nil)
}

func csdService(t *testing.T, days int) (*Service, kv.Store, func(time.Duration)) {
	t.Helper()
	store, chunks, clk := testenv.Stores(t)
	s := New(store, chunks, clk, nil)
	s.SetContainerSoftDelete(func(string) int { return days })
	retain := 30
	if _, err := s.props.SetProperties(context.Background(), svcprops.SetPropertiesInput{Account: "acct", Properties: svcprops.Properties{
		DeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &retain}}}); err != nil {
		t.Fatal(err)
	}
	return s, store, clk.Advance
}

// The container soft delete state machine: delete moves the records to
// the alias and frees the name; the name answers 409 while the move runs;
// List Containers include=deleted shows the version; restore onto a taken
// name is 409, of an unknown version 404; restore brings every record
// back; at expiry the sweep reclaims the alias and its data.
func TestContainerSoftDeleteStateMachine(t *testing.T) {
	ctx := context.Background()
	s, store, advance := csdService(t, 3)
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	const n = 600 // more than the delete's inline move transactions take
	csdFill(t, s, c, n)
	live, liveExp := csdCount(t, store, "acct", "cnt")
	if live < n+4 || liveExp != 1 {
		t.Fatalf("%d records, %d expiry entries before the delete", live, liveExp)
	}
	held := referenced(t, s)

	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	// Gone at once; the name is busy until the move ends.
	_, err := s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	_, err = s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "b00003")})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	_, err = s.CreateContainer(ctx, CreateContainerInput{Ref: c})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
	del := csdDeleted(t, s)
	if len(del) != 1 {
		t.Fatalf("deleted %+v", del)
	}
	v1 := del[0].Deleted.Version
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: v1})
	wantCode(t, err, 409, azerr.ContainerBeingDeleted)
	if _, err := s.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	alias := containerAlias("cnt", v1)
	if r, x := csdCount(t, store, "acct", "cnt"); r != 0 || x != 0 {
		t.Fatalf("%d records, %d expiry entries left under the name", r, x)
	}
	if r, x := csdCount(t, store, "acct", alias); r != live || x != liveExp {
		t.Fatalf("%d records, %d expiry entries under the alias, want %d, %d", r, x, live, liveExp)
	}
	if got := referenced(t, s); got != held {
		t.Fatalf("%d data items referenced after the move, want %d", got, held)
	}

	// Listed with include=deleted only, with its days left.
	lc, err := s.ListContainers(ctx, ListContainersInput{Account: "acct", MaxResults: 10})
	if err != nil || len(lc.Items) != 0 {
		t.Fatalf("List Containers: %+v %v", lc, err)
	}
	del = csdDeleted(t, s)
	if len(del) != 1 || del[0].Name != "cnt" || del[0].Deleted.RemainingDays != 2 || del[0].Properties.Metadata["m"] != "1" {
		t.Fatalf("deleted %+v", del)
	}

	// The name is free: a new container is independent of the deleted one.
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "b00003")}); err == nil {
		t.Fatal("the new container shows a blob of the deleted one")
	}
	putBlock(t, s, blobAt(c, "fresh"), "new", Access{})
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: v1})
	wantCode(t, err, 409, azerr.ContainerAlreadyExists)
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: "01D60F8BB59A4652"})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	advance(time.Second)
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	del = csdDeleted(t, s)
	if len(del) != 2 || del[0].Deleted.Version != v1 || del[1].Deleted.Version <= v1 {
		t.Fatalf("deleted %+v", del)
	}
	v2 := del[1].Deleted.Version
	// One per page: the markers step through both versions of the name.
	var names []string
	marker := ""
	for {
		page, err := s.ListContainers(ctx, ListContainersInput{Account: "acct", MaxResults: 1, Deleted: true, Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			names = append(names, it.Name+"@"+it.Deleted.Version)
		}
		if marker = page.NextMarker; marker == "" {
			break
		}
	}
	if strings.Join(names, ",") != "cnt@"+v1+",cnt@"+v2 {
		t.Fatalf("paged listing %v", names)
	}

	// Restore the first: everything is back.
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: v1}); err != nil {
		t.Fatal(err)
	}
	if r, x := csdCount(t, store, "acct", "cnt"); r != live || x != liveExp {
		t.Fatalf("%d records, %d expiry entries restored, want %d, %d", r, x, live, liveExp)
	}
	p, err := s.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	if err != nil || p.Metadata["m"] != "1" {
		t.Fatalf("restored container %+v %v", p, err)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(c, "b00417")}); body != "blob 417 of cnt" {
		t.Fatalf("restored blob reads %q", body)
	}
	if _, body := readBlob(t, s, GetBlobInput{Ref: blobAt(c, "b00002")}); body != "third" {
		t.Fatalf("restored blob reads %q", body)
	}
	tags, err := s.GetBlobTags(ctx, GetBlobTagsInput{Ref: blobAt(c, "b00009")})
	if err != nil || tags["k"] != "v" {
		t.Fatalf("restored tags %+v %v", tags, err)
	}
	if err := s.UndeleteBlob(ctx, UndeleteBlobInput{Ref: blobAt(c, "b00001")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetBlobProperties(ctx, GetBlobPropertiesInput{Ref: blobAt(c, "fresh")}); err == nil {
		t.Fatal("the restored container shows the other version's blob")
	}
	if del = csdDeleted(t, s); len(del) != 1 || del[0].Deleted.Version != v2 {
		t.Fatalf("deleted after restore %+v", del)
	}

	// Expiry: v2 is neither listed nor restorable after 3 days, and the
	// sweep reclaims its records and data.
	advance(3*24*time.Hour + time.Minute)
	if del = csdDeleted(t, s); len(del) != 0 {
		t.Fatalf("expired version listed: %+v", del)
	}
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	err = s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: v2})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	for i := 0; i < 3; i++ {
		if _, err := s.ReclaimContainers(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ := csdCount(t, store, "acct", containerAlias("cnt", v2)); r != 0 {
		t.Fatalf("%d records of the expired version left", r)
	}
	advance(3*24*time.Hour + time.Minute)
	for i := 0; i < 3; i++ {
		if _, err := s.ReclaimContainers(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r, x := csdCount(t, store, "acct", "cnt"); r != 0 || x != 0 {
		t.Fatalf("%d records, %d expiry entries left", r, x)
	}
	if got := referenced(t, s); got != 0 {
		t.Fatalf("%d data items still referenced", got)
	}
	if n := csdKeys(t, store, "cx") + csdKeys(t, store, "cm") + csdKeys(t, store, "rcl"); n != 0 {
		t.Fatalf("%d deleted records, jobs or tombstones left", n)
	}
}

func csdKeys(t *testing.T, store kv.Store, ns string) int {
	t.Helper()
	n := 0
	err := store.View(context.Background(), func(tx kv.Tx) error {
		n = 0
		p := kv.Key(ns)
		return tx.Scan(p, kv.PrefixEnd(p), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A move stopped midway (the process stopped between two of its
// transactions) is finished by the sweep of a process started later over
// the same store: a delete's, then a restore's.
func TestContainerSoftDeleteInterruptedMove(t *testing.T) {
	ctx := context.Background()
	store, chunks, clk := testenv.Stores(t)
	cs := &countingStore{Store: store}
	s := New(cs, chunks, clk, nil)
	s.SetContainerSoftDelete(func(string) int { return 7 })
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := s.CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	fillContainer(t, s, c, 900)
	live, _ := csdCount(t, store, "acct", "cnt")
	// The delete: its transaction and one inline move step, then stop.
	if err := s.DeleteContainer(ctx, DeleteContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	if r, _ := csdCount(t, store, "acct", "cnt"); r == 0 || r == live {
		t.Fatalf("%d of %d records under the name: want a move in progress", r, live)
	}
	v := csdDeleted(t, s)[0].Deleted.Version
	s2 := New(store, chunks, clk, nil)
	s2.SetContainerSoftDelete(func(string) int { return 7 })
	if _, err := s2.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := csdCount(t, store, "acct", containerAlias("cnt", v)); r != live {
		t.Fatalf("%d records under the alias, want %d", r, live)
	}

	// The restore: stop it after two of its move transactions.
	errStop := errors.New("stopped")
	updates := 0
	cs.before = func(int) error {
		if updates++; updates > 3 {
			return errStop
		}
		return nil
	}
	if err := s.RestoreContainer(ctx, RestoreContainerInput{Ref: c, DeletedName: "cnt", DeletedVersion: v}); !errors.Is(err, errStop) {
		t.Fatalf("restore: %v, want it stopped", err)
	}
	_, err := s2.GetContainerProperties(ctx, GetContainerPropertiesInput{Ref: c})
	wantCode(t, err, 404, azerr.ContainerNotFound)
	if del := csdDeleted(t, s2); len(del) != 0 {
		t.Fatalf("a container under restore is listed: %+v", del)
	}
	if _, err := s2.ReclaimContainers(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := csdCount(t, store, "acct", "cnt"); r != live {
		t.Fatalf("%d records restored, want %d", r, live)
	}
	if _, body := readBlob(t, s2, GetBlobInput{Ref: blobAt(c, "b00899")}); body != "blob 899 of cnt" {
		t.Fatalf("restored blob reads %q", body)
	}
}
