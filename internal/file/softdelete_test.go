package file

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// sdCount is the number of records under the prefix of kv.Key(parts...).
func sdCount(t *testing.T, s *Service, parts ...string) int {
	t.Helper()
	n := 0
	pre := kv.Key(parts...)
	err := s.store.View(t.Context(), func(tx kv.Tx) error {
		n = 0
		return tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(_, _ []byte) bool { n++; return true })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sdDeleted lists the deleted shares of shAcct at the clock's time.
func sdDeleted(t *testing.T, s *Service) []ListedShare {
	t.Helper()
	out, err := s.ListShares(t.Context(), ListSharesInput{Account: shAcct, MaxResults: 100, Deleted: true, Now: s.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var del []ListedShare
	for _, it := range out.Shares {
		if it.Deleted != nil {
			del = append(del, it)
		}
	}
	return del
}

func sdRef(s *Service, name string) Ref { return Ref{Account: shAcct, Share: name, Now: s.clock.Now()} }

// The soft delete state machine on the domain: delete moves the share's
// records off its name, the name is free, restore onto a taken name is
// 409, restore moves them back; at expiry the sweep purges every record.
func TestShareSoftDeleteStateMachine(t *testing.T) {
	s, clk := shService(t)
	s.SetShareSoftDelete(func(string) int { return 3 })
	ctx := t.Context()
	shOK(t, s, clk, http.StatusCreated, "PUT", "/sdx?restype=share", "")
	shOK(t, s, clk, http.StatusCreated, "PUT", "/sdx/f", "", "x-ms-type", "file", "x-ms-content-length", "10")
	live := sdCount(t, s, "fe", shAcct, "sdx")
	if live == 0 {
		t.Fatal("no entries")
	}
	out, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "sdx")})
	if err != nil || !out.SoftDeleted {
		t.Fatalf("delete: %+v, %v", out, err)
	}
	del := sdDeleted(t, s)
	if len(del) != 1 || del[0].Name != "sdx" || del[0].Deleted.RemainingDays != 3 {
		t.Fatalf("deleted %+v", del)
	}
	v1 := del[0].Deleted.Version
	alias := aliasName("sdx", v1)
	if n := sdCount(t, s, "fe", shAcct, "sdx"); n != 0 {
		t.Fatalf("%d entries left under the name", n)
	}
	if n := sdCount(t, s, "fe", shAcct, alias); n != live {
		t.Fatalf("%d entries under the alias, want %d", n, live)
	}
	if n := sdCount(t, s, "fsm"); n != 0 {
		t.Fatalf("%d move jobs left", n)
	}

	// The name is free; restoring onto it is 409, an unknown version 404.
	shOK(t, s, clk, http.StatusCreated, "PUT", "/sdx?restype=share", "")
	_, err = s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "sdx"), DeletedName: "sdx", DeletedVersion: v1})
	shErr(t, err, azerr.ShareAlreadyExists)
	_, err = s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "sdx"), DeletedName: "sdx", DeletedVersion: "0000000000000001"})
	shErr(t, err, azerr.ShareNotFound)
	clk.Advance(time.Second)
	if _, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "sdx")}); err != nil {
		t.Fatal(err)
	}
	if got := len(sdDeleted(t, s)); got != 2 {
		t.Fatalf("%d deleted versions, want 2", got)
	}
	if _, err := s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "sdx"), DeletedName: "sdx", DeletedVersion: v1}); err != nil {
		t.Fatal(err)
	}
	if n := sdCount(t, s, "fe", shAcct, "sdx"); n != live {
		t.Fatalf("%d entries after restore, want %d", n, live)
	}
	if n := sdCount(t, s, "fe", shAcct, alias); n != 0 {
		t.Fatalf("%d entries left under the alias", n)
	}
	shOK(t, s, clk, http.StatusOK, "GET", "/sdx/f", "")
	// Restored once: with the name free again, v1 is 404.
	if _, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "sdx")}); err != nil {
		t.Fatal(err)
	}
	_, err = s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "sdx"), DeletedName: "sdx", DeletedVersion: v1})
	shErr(t, err, azerr.ShareNotFound)

	// Expiry: nothing listed, nothing restorable, every record purged.
	clk.Advance(3 * 24 * time.Hour)
	if got := len(sdDeleted(t, s)); got != 0 {
		t.Fatalf("%d deleted versions after expiry", got)
	}
	for {
		did, err := s.SweepDeletedShares(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			break
		}
	}
	for _, pfx := range []string{"fsx", "fsm", "fsd", "fe", "fi", "fs"} {
		if n := sdCount(t, s, pfx, shAcct); n != 0 {
			t.Errorf("%d %q records after expiry", n, pfx)
		}
	}
}

// A delete whose move was cut short (the process stopped after the
// delete's transaction) blocks the name with 409 ShareBeingDeleted until
// the sweep finishes the move.
func TestShareSoftDeleteInterruptedMove(t *testing.T) {
	s, clk := shService(t)
	ctx := t.Context()
	shOK(t, s, clk, http.StatusCreated, "PUT", "/mvx?restype=share", "")
	for _, f := range []string{"aaa", "bbb", "ccc"} {
		shOK(t, s, clk, http.StatusCreated, "PUT", "/mvx/"+f, "", "x-ms-type", "file", "x-ms-content-length", "1")
	}
	live := sdCount(t, s, "fe", shAcct, "mvx")
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		return softDelete(tx, shAcct, "mvx", []string{""}, 1, clk.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateShare(ctx, CreateShareInput{Ref: sdRef(s, "mvx")})
	shErr(t, err, azerr.ShareBeingDeleted)
	if got := len(sdDeleted(t, s)); got != 1 {
		t.Fatalf("%d deleted shares during the move", got)
	}
	_, err = s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "mvx"), DeletedName: "mvx", DeletedVersion: sdDeleted(t, s)[0].Deleted.Version})
	shErr(t, err, azerr.ShareBeingDeleted)
	for {
		did, err := s.SweepDeletedShares(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			break
		}
	}
	if n := sdCount(t, s, "fe", shAcct, "mvx"); n != 0 {
		t.Fatalf("%d entries under the name after the sweep", n)
	}
	if n := sdCount(t, s, "fe", shAcct, aliasName("mvx", sdDeleted(t, s)[0].Deleted.Version)); n != live {
		t.Fatalf("%d entries under the alias, want %d", n, live)
	}
	if _, err := s.CreateShare(ctx, CreateShareInput{Ref: sdRef(s, "mvx")}); err != nil {
		t.Fatal(err)
	}
}

// An account's File Service Properties turn share soft delete on without
// the server setting; without either, Delete Share is permanent.
func TestShareSoftDeleteFromServiceProperties(t *testing.T) {
	s, clk := shService(t)
	ctx := t.Context()
	shOK(t, s, clk, http.StatusCreated, "PUT", "/hard?restype=share", "")
	if out, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "hard")}); err != nil || out.SoftDeleted {
		t.Fatalf("delete without retention: %+v, %v", out, err)
	}
	if got := len(sdDeleted(t, s)); got != 0 {
		t.Fatalf("%d deleted shares without retention", got)
	}
	days := 2
	_, err := s.ServiceProperties().SetProperties(ctx, svcprops.SetPropertiesInput{Account: shAcct, Properties: svcprops.Properties{ShareDeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &days}}})
	if err != nil {
		t.Fatal(err)
	}
	shOK(t, s, clk, http.StatusCreated, "PUT", "/soft?restype=share", "")
	if out, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "soft")}); err != nil || !out.SoftDeleted {
		t.Fatalf("delete with the account's retention: %+v, %v", out, err)
	}
	if del := sdDeleted(t, s); len(del) != 1 || del[0].Deleted.RemainingDays != 2 {
		t.Fatalf("deleted %+v", del)
	}
}

// Deleted shares page with the live ones: each after its name's live
// share, and a page boundary on a deleted one continues after it.
func TestShareSoftDeleteListPages(t *testing.T) {
	s, clk := shService(t)
	s.SetShareSoftDelete(func(string) int { return 1 })
	ctx := context.Background()
	for _, n := range []string{"aaa", "bbb", "ccc"} {
		shOK(t, s, clk, http.StatusCreated, "PUT", "/"+n+"?restype=share", "")
	}
	for _, n := range []string{"aaa", "bbb"} {
		if _, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, n)}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Millisecond)
	}
	shOK(t, s, clk, http.StatusCreated, "PUT", "/bbb?restype=share", "")
	var got []string
	marker := ""
	for pages := 0; ; pages++ {
		out, err := s.ListShares(ctx, ListSharesInput{Account: shAcct, Marker: marker, MaxResults: 1, Deleted: true, Now: clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Shares {
			tag := it.Name
			if it.Deleted != nil {
				tag += "(deleted)"
			}
			got = append(got, tag)
		}
		if marker = out.NextMarker; marker == "" || pages > 10 {
			break
		}
	}
	want := "aaa(deleted) bbb bbb(deleted) ccc"
	if g := joinSpace(got); g != want {
		t.Fatalf("listing %q, want %q", g, want)
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// The server's setting shows in Get File Service Properties; an account's
// own enabled ShareDeleteRetentionPolicy takes precedence.
func TestShareSoftDeleteServerSettingShown(t *testing.T) {
	s, clk := shService(t)
	ctx := t.Context()
	s.SetShareSoftDelete(func(string) int { return 5 })
	got, err := s.ServiceProperties().GetProperties(ctx, svcprops.GetPropertiesInput{Account: shAcct})
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Properties.ShareDeleteRetentionPolicy; r == nil || !r.Enabled || r.Days == nil || *r.Days != 5 {
		t.Fatalf("policy %+v, want enabled for 5 days", r)
	}
	days := 9
	_, err = s.ServiceProperties().SetProperties(ctx, svcprops.SetPropertiesInput{Account: shAcct, Properties: svcprops.Properties{ShareDeleteRetentionPolicy: &svcprops.Retention{Enabled: true, Days: &days}}})
	if err != nil {
		t.Fatal(err)
	}
	shOK(t, s, clk, http.StatusCreated, "PUT", "/nine?restype=share", "")
	if _, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "nine")}); err != nil {
		t.Fatal(err)
	}
	if del := sdDeleted(t, s); len(del) != 1 || del[0].Deleted.RemainingDays != 9 {
		t.Fatalf("deleted %+v, want 9 days left", del)
	}
}

// Restore Share may give the share another name (Restore Share's
// restoredShareName): the records move from the deleted version to it.
func TestShareSoftDeleteRestoreOtherName(t *testing.T) {
	s, clk := shService(t)
	s.SetShareSoftDelete(func(string) int { return 1 })
	ctx := t.Context()
	shOK(t, s, clk, http.StatusCreated, "PUT", "/orig?restype=share", "")
	shOK(t, s, clk, http.StatusCreated, "PUT", "/orig/f", "", "x-ms-type", "file", "x-ms-content-length", "4")
	live := sdCount(t, s, "fe", shAcct, "orig")
	if _, err := s.DeleteShare(ctx, DeleteShareInput{Ref: sdRef(s, "orig")}); err != nil {
		t.Fatal(err)
	}
	v := sdDeleted(t, s)[0].Deleted.Version
	if _, err := s.RestoreShare(ctx, RestoreShareInput{Ref: sdRef(s, "copy"), DeletedName: "orig", DeletedVersion: v}); err != nil {
		t.Fatal(err)
	}
	if n := sdCount(t, s, "fe", shAcct, "copy"); n != live {
		t.Fatalf("%d entries under the new name, want %d", n, live)
	}
	shOK(t, s, clk, http.StatusOK, "GET", "/copy/f", "")
	if _, err := s.GetShareProperties(ctx, GetSharePropertiesInput{Ref: sdRef(s, "orig")}); err == nil {
		t.Fatal("the old name is a share again")
	}
	if n := len(sdDeleted(t, s)) + sdCount(t, s, "fsm") + sdCount(t, s, "fe", shAcct, aliasName("orig", v)); n != 0 {
		t.Fatalf("%d deleted versions, jobs or alias records left", n)
	}
}

// Restore Share over REST: both headers are required (400
// MissingRequiredHeader), and a restore answers 201 with the share's
// ETag and Last-Modified.
func TestShareSoftDeleteRestoreREST(t *testing.T) {
	s, clk := shService(t)
	s.SetShareSoftDelete(func(string) int { return 1 })
	shOK(t, s, clk, http.StatusCreated, "PUT", "/rest?restype=share", "")
	shOK(t, s, clk, http.StatusAccepted, "DELETE", "/rest?restype=share", "")
	_, err := shDo(t, s, clk, "PUT", "/rest?restype=share&comp=undelete", "", "x-ms-deleted-share-name", "rest")
	shErr(t, err, azerr.MissingRequiredHeader)
	_, err = shDo(t, s, clk, "PUT", "/rest?restype=share&comp=undelete", "", "x-ms-deleted-share-version", "0000000000000001")
	shErr(t, err, azerr.MissingRequiredHeader)
	v := sdDeleted(t, s)[0].Deleted.Version
	w := shOK(t, s, clk, http.StatusCreated, "PUT", "/rest?restype=share&comp=undelete", "", "x-ms-deleted-share-name", "rest", "x-ms-deleted-share-version", v)
	if w.Header().Get("ETag") == "" || w.Header().Get("Last-Modified") == "" {
		t.Fatalf("restore headers %v", w.Header())
	}
	shOK(t, s, clk, http.StatusOK, "GET", "/rest?restype=share", "")
}
