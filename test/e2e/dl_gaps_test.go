package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLGapsPutBlock: Put Block holds a file of a hierarchical account
// to the rules it holds a flat account's blob to, the same answers on
// both: a block for an archived blob is 409 BlobArchived, a leased one
// needs its lease (412 LeaseIdMissing), a lease id where there is
// nothing is 412 LeaseNotPresentWithBlobOperation, and a block for a
// live, unleased blob is staged and committed.
func TestDLGapsPutBlock(t *testing.T) {
	for _, hns := range []bool{false, true} {
		t.Run(fmt.Sprintf("hns=%v", hns), func(t *testing.T) {
			e := startDL(t, hns)
			bs := client(t, e.app.BlobURL, app.DevKey)
			_, err := bs.CreateContainer(e.ctx, "blocks", nil)
			must(t, err)
			bc := bs.ServiceClient().NewContainerClient("blocks")
			id := base64.StdEncoding.EncodeToString([]byte("block-000"))
			body := func() io.ReadSeekCloser { return btBody([]byte("more")) }
			for _, name := range []string{"d/cold", "d/leased", "d/live"} {
				_, err = bs.UploadBuffer(e.ctx, "blocks", name, []byte("data"), nil)
				must(t, err)
			}
			_, err = bc.NewBlobClient("d/cold").SetTier(e.ctx, blob.AccessTierArchive, nil)
			must(t, err)
			_, err = bc.NewBlockBlobClient("d/cold").StageBlock(e.ctx, id, body(), nil)
			wantCode(t, err, http.StatusConflict, bloberror.BlobArchived)

			lc, err := lease.NewBlobClient(bc.NewBlobClient("d/leased"), &lease.BlobClientOptions{LeaseID: to.Ptr("11111111-2222-3333-4444-555555555555")})
			must(t, err)
			_, err = lc.AcquireLease(e.ctx, -1, nil)
			must(t, err)
			_, err = bc.NewBlockBlobClient("d/leased").StageBlock(e.ctx, id, body(), nil)
			wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseIDMissing)
			_, err = bc.NewBlockBlobClient("d/leased").StageBlock(e.ctx, id, body(), &blockblob.StageBlockOptions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}})
			must(t, err)
			_, err = bc.NewBlockBlobClient("d/none").StageBlock(e.ctx, id, body(), &blockblob.StageBlockOptions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: lc.LeaseID()}})
			wantCode(t, err, http.StatusPreconditionFailed, bloberror.LeaseNotPresentWithBlobOperation)

			_, err = bc.NewBlockBlobClient("d/live").StageBlock(e.ctx, id, body(), nil)
			must(t, err)
			_, err = bc.NewBlockBlobClient("d/live").CommitBlockList(e.ctx, []string{id}, nil)
			must(t, err)
			if got := blobText(t, e, bc, "d/live"); got != "more" {
				t.Fatalf("d/live after the commit: %q", got)
			}
			// The archived blob is unchanged, and rehydrated takes blocks.
			_, err = bc.NewBlobClient("d/cold").SetTier(e.ctx, blob.AccessTierHot, nil)
			must(t, err)
			_, err = bc.NewBlockBlobClient("d/cold").StageBlock(e.ctx, id, body(), nil)
			must(t, err)
		})
	}
}

// TestDLGapsGetPageRanges: Get Page Ranges of a path answers what a flat
// account answers for a block blob, which every path is in the Blob
// view: 409 InvalidBlobType (a file or a directory), 404 BlobNotFound
// for a name with nothing there.
func TestDLGapsGetPageRanges(t *testing.T) {
	for _, hns := range []bool{false, true} {
		t.Run(fmt.Sprintf("hns=%v", hns), func(t *testing.T) {
			e := startDL(t, hns)
			bs := client(t, e.app.BlobURL, app.DevKey)
			_, err := bs.CreateContainer(e.ctx, "pages", nil)
			must(t, err)
			bc := bs.ServiceClient().NewContainerClient("pages")
			_, err = bs.UploadBuffer(e.ctx, "pages", "d/f", []byte("block content"), nil)
			must(t, err)
			names := []string{"d/f"}
			if hns {
				names = append(names, "d") // the directory the upload made
			}
			for _, name := range names {
				_, err = bc.NewPageBlobClient(name).NewGetPageRangesPager(nil).NextPage(e.ctx)
				wantCode(t, err, http.StatusConflict, bloberror.InvalidBlobType)
			}
			_, err = bc.NewPageBlobClient("d/none").NewGetPageRangesPager(nil).NextPage(e.ctx)
			wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
		})
	}
}

// listed is one entry of an azblob listing as the tests compare it.
func listedEntry(it *container.BlobItem) string {
	s := *it.Name
	if it.Deleted != nil && *it.Deleted {
		s += "(deleted " + it.Properties.DeletedTime.UTC().Format(time.TimeOnly) + ")"
	}
	return s
}

// TestDLGapsListIncludeDeleted: List Blobs with include=deleted on a
// hierarchical account lists the soft-deleted paths with the live ones,
// in name order, as a flat account lists its soft-deleted blobs: each
// deletion of a name after the live path of that name, oldest first; a
// recursively deleted directory is one entry; with a delimiter the
// deleted paths fold into the prefixes as live ones do, each prefix
// once. Pages of every size list the same entries.
func TestDLGapsListIncludeDeleted(t *testing.T) {
	e := startDL(t, true)
	sd := newSoftDeleted(t, e, "incdel")
	bc, del := sd.bc, sd.del
	var err error
	put := func(name string) { t.Helper(); sd.put(name, name) }
	start := e.clock.Now()
	at := func(s int) string { return start.Add(time.Duration(s) * time.Second).UTC().Format(time.TimeOnly) }
	put("a")
	del("a") // 1
	put("a")
	del("a") // 2
	put("a")
	put("b/x")
	put("b/y")
	del("b/y") // 3
	put("c")
	del("c") // 4
	put("e/z")
	_, err = e.fs("incdel").NewDirectoryClient("e").Delete(e.ctx, nil) // recursive: e and e/z are one entry
	must(t, err)
	put("f")

	want := []string{"a", "a(deleted " + at(1) + ")", "a(deleted " + at(2) + ")", "b", "b/x", "b/y(deleted " + at(3) + ")", "c(deleted " + at(4) + ")", "f"}
	// e was deleted by the dfs Path Delete, at the clock's time then.
	flat := func(max int32) []string {
		var got []string
		pg := bc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{MaxResults: to.Ptr(max), Include: container.ListBlobsInclude{Deleted: true}})
		for pg.More() {
			page, err := pg.NextPage(e.ctx)
			must(t, err)
			for _, it := range page.Segment.BlobItems {
				if strings.HasPrefix(*it.Name, "e") {
					if !*it.Deleted || *it.Name != "e" {
						t.Fatalf("e listed as %s deleted=%v", *it.Name, *it.Deleted)
					}
					continue
				}
				got = append(got, listedEntry(it))
			}
		}
		return got
	}
	for _, max := range []int32{1, 2, 3, 5000} {
		if got := flat(max); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("pages of %d:\n got %v\nwant %v", max, got, want)
		}
	}
	// Without include=deleted only the live paths.
	if got := listFlat(t, e, bc, 5000); strings.Join(got, ",") != "a,b(dir),b/x,f" {
		t.Fatalf("live listing: %v", got)
	}
	// With a delimiter: b/ once, although a live and a deleted path
	// fold into it; g/ and h/ hold deleted paths alone (their directories
	// stay, as the uploads made them).
	put("g/live")
	del("g/live")
	put("h/k")
	del("h/k")
	// m/ holds deleted paths alone: m/n, then the directory m.
	put("m/n")
	del("m/n")
	_, err = e.fs("incdel").NewDirectoryClient("m").Delete(e.ctx, nil)
	must(t, err)
	hier := func(max int32) []string {
		var got []string
		pg := bc.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{MaxResults: to.Ptr(max), Include: container.ListBlobsInclude{Deleted: true}})
		for pg.More() {
			page, err := pg.NextPage(e.ctx)
			must(t, err)
			for _, p := range page.Segment.BlobPrefixes {
				got = append(got, *p.Name)
			}
			for _, it := range page.Segment.BlobItems {
				got = append(got, listedEntry(it))
			}
		}
		return got
	}
	all := hier(5000)
	wantAll := []string{"b/", "g/", "h/", "m/", "a", "a(deleted " + at(1) + ")", "a(deleted " + at(2) + ")", "b", "c(deleted " + at(4) + ")", "e(deleted " + at(4) + ")", "f", "g", "h", "m(deleted " + at(7) + ")"}
	if strings.Join(all, ",") != strings.Join(wantAll, ",") {
		t.Fatalf("hierarchy:\n got %v\nwant %v", all, wantAll)
	}
	for _, max := range []int32{1, 2, 4} {
		// Page by page the same entries (a page lists its prefixes
		// before its blobs): compare sorted.
		got := hier(max)
		slices.Sort(got)
		sorted := slices.Sorted(slices.Values(all))
		if strings.Join(got, ",") != strings.Join(sorted, ",") {
			t.Fatalf("pages of %d:\n got %v\nwant %v", max, got, sorted)
		}
	}
}

// TestDLGapsUndeleteWithoutSource: Undelete Blob without
// x-ms-undelete-source on a hierarchical account restores the most
// recent retained deletion of the name (what a flat account restores:
// its soft-deleted blob), a directory with its content; a live path is
// left as it is (200, as a live blob); a name with nothing retained is
// 404 BlobNotFound; a path whose parent directory is deleted too is 404
// until the parent is restored.
func TestDLGapsUndeleteWithoutSource(t *testing.T) {
	e := startDL(t, true)
	sd := newSoftDeleted(t, e, "und")
	bc, put, del := sd.bc, sd.put, sd.del
	var err error
	put("f", "first")
	del("f")
	put("f", "second")
	del("f")
	_, err = bc.NewBlobClient("f").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "f"); got != "second" {
		t.Fatalf("f restored as %q, want the latest deletion", got)
	}
	// Live: left as it is; the older deletion is still there.
	_, err = bc.NewBlobClient("f").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "f"); got != "second" {
		t.Fatalf("f after undelete of a live path: %q", got)
	}
	del("f")
	_, err = bc.NewBlobClient("f").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "f"); got != "second" {
		t.Fatalf("f restored again as %q", got)
	}
	del("f")
	_, err = bc.NewBlobClient("f").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "f"); got != "second" {
		t.Fatalf("f restored a third time as %q", got)
	}
	_, err = bc.NewBlobClient("none").Undelete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)

	// A directory comes back with its content; a file under a deleted
	// directory waits for it.
	put("d/x", "x")
	put("d/y", "y")
	del("d/y")
	_, err = e.fs("und").NewDirectoryClient("d").Delete(e.ctx, nil)
	must(t, err)
	_, err = bc.NewBlobClient("d/y").Undelete(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.BlobNotFound)
	_, err = bc.NewBlobClient("d").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "d/x"); got != "x" {
		t.Fatalf("d/x after the directory's undelete: %q", got)
	}
	_, err = bc.NewBlobClient("d/y").Undelete(e.ctx, nil)
	must(t, err)
	if got := blobText(t, e, bc, "d/y"); got != "y" {
		t.Fatalf("d/y: %q", got)
	}
}

// blobText downloads blob name of bc through azblob.
func blobText(t *testing.T, e *dlEnv, bc *container.Client, name string) string {
	t.Helper()
	r, err := bc.NewBlobClient(name).DownloadStream(e.ctx, nil)
	must(t, err)
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	must(t, err)
	return string(b)
}

// TestDLGapsUPN: upn=true on Path - List and Path - Get Properties
// (getAccessControl, getStatus) names the users whose bearer tokens the
// server has authenticated by their user principal names (the upn
// claim, else unique_name, else preferred_username), in x-ms-owner,
// x-ms-group and x-ms-acl and in the listing's owner, and so does
// x-ms-upn: true on Get Blob and Get Blob Properties; group ids, users
// never seen and $superuser stay as they are, and upn=false answers ids.
func TestDLGapsUPN(t *testing.T) {
	e, hc := startDLBearer(t)
	as := func(tok principalToken) *filesystem.Client {
		opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}}
		svc, err := service.NewClient(e.app.DFSURL, tok, opts)
		must(t, err)
		return svc.NewFileSystemClient("names")
	}
	const alice, bob, carol, group, stranger = "a1a1a1a1-0000-0000-0000-000000000001", "b2b2b2b2-0000-0000-0000-000000000002", "c3c3c3c3-0000-0000-0000-000000000003", "99999999-0000-0000-0000-000000000009", "77777777-0000-0000-0000-000000000007"
	su := e.mkfs("names")
	_, err := su.NewDirectoryClient("").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0777")})
	must(t, err)
	// Each user's first request teaches the server its name.
	_, err = as(principalToken{oid: alice, claim: "upn", name: "alice@contoso.com"}).NewFileClient("a.txt").Create(e.ctx, nil)
	must(t, err)
	_, err = as(principalToken{oid: bob, claim: "unique_name", name: "bob@contoso.com"}).NewFileClient("b.txt").Create(e.ctx, nil)
	must(t, err)
	_, err = as(principalToken{oid: carol, claim: "preferred_username", name: "carol@fabrikam.com"}).NewFileClient("c.txt").Create(e.ctx, nil)
	must(t, err)
	// alice's file: bob, a group and a stranger in its ACL (in the
	// canonical order of their ids, which the names keep), carol its group.
	acl := "user::rw-,user:" + stranger + ":r--,user:" + bob + ":r--,group::r--,group:" + group + ":r--,mask::r--,other::---"
	_, err = su.NewFileClient("a.txt").SetAccessControl(e.ctx, &file.SetAccessControlOptions{ACL: to.Ptr(acl)})
	must(t, err)
	_, err = su.NewFileClient("a.txt").SetAccessControl(e.ctx, &file.SetAccessControlOptions{Group: to.Ptr(carol)})
	must(t, err)

	ac, err := su.NewFileClient("a.txt").GetAccessControl(e.ctx, &file.GetAccessControlOptions{UPN: to.Ptr(true)})
	must(t, err)
	wantACL := "user::rw-,user:" + stranger + ":r--,user:bob@contoso.com:r--,group::r--,group:" + group + ":r--,mask::r--,other::---"
	if *ac.Owner != "alice@contoso.com" || *ac.Group != "carol@fabrikam.com" || *ac.ACL != wantACL {
		t.Fatalf("upn=true: owner %s group %s acl %s", *ac.Owner, *ac.Group, *ac.ACL)
	}
	ac, err = su.NewFileClient("a.txt").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.Owner != alice || *ac.Group != carol || *ac.ACL != acl {
		t.Fatalf("upn=false: owner %s group %s acl %s", *ac.Owner, *ac.Group, *ac.ACL)
	}
	// getStatus, raw: the dfs SDK reads properties through the Blob API.
	resp, body := e.raw(http.MethodHead, "/names/b.txt?action=getStatus&upn=true", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-owner") != "bob@contoso.com" || resp.Header.Get("x-ms-group") != "$superuser" {
		t.Fatalf("getStatus upn=true: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = e.raw(http.MethodHead, "/names/b.txt?action=getStatus", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("x-ms-owner") != bob {
		t.Fatalf("getStatus: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	owners := func(upn bool) []string {
		page, err := su.NewListPathsPager(false, &filesystem.ListPathsOptions{UPN: to.Ptr(upn)}).NextPage(e.ctx)
		must(t, err)
		var got []string
		for _, p := range page.Paths {
			got = append(got, *p.Name+"="+*p.Owner+"/"+*p.Group)
		}
		return got
	}
	if got := strings.Join(owners(true), ","); got != "a.txt=alice@contoso.com/carol@fabrikam.com,b.txt=bob@contoso.com/$superuser,c.txt=carol@fabrikam.com/$superuser" {
		t.Fatalf("List Paths upn=true: %s", got)
	}
	if got := strings.Join(owners(false), ","); got != "a.txt="+alice+"/"+carol+",b.txt="+bob+"/$superuser,c.txt="+carol+"/$superuser" {
		t.Fatalf("List Paths upn=false: %s", got)
	}
	// Get Blob Properties and Get Blob with x-ms-upn (version
	// 2023-11-03), through the Blob API of the same port.
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		resp, body = e.raw(method, "/names/a.txt", map[string]string{"x-ms-upn": "true"}, nil)
		if resp.StatusCode != 200 || resp.Header.Get("x-ms-owner") != "alice@contoso.com" || resp.Header.Get("x-ms-group") != "carol@fabrikam.com" || resp.Header.Get("x-ms-acl") != wantACL {
			t.Fatalf("%s x-ms-upn: %d %s %v", method, resp.StatusCode, body, resp.Header)
		}
		resp, body = e.raw(method, "/names/a.txt", nil, nil)
		if resp.StatusCode != 200 || resp.Header.Get("x-ms-owner") != alice || resp.Header.Get("x-ms-acl") != acl {
			t.Fatalf("%s: %d %s %v", method, resp.StatusCode, body, resp.Header)
		}
	}
	resp, _ = e.raw(http.MethodHead, "/names/a.txt", map[string]string{"x-ms-upn": "yes"}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("x-ms-upn: yes: %d %v", resp.StatusCode, resp.Header)
	}
	// A new name for alice replaces the old one.
	_, err = as(principalToken{oid: alice, claim: "upn", name: "alice.smith@contoso.com"}).NewFileClient("a2.txt").Create(e.ctx, nil)
	must(t, err)
	ac, err = su.NewFileClient("a.txt").GetAccessControl(e.ctx, &file.GetAccessControlOptions{UPN: to.Ptr(true)})
	must(t, err)
	if *ac.Owner != "alice.smith@contoso.com" {
		t.Fatalf("after a new name: owner %s", *ac.Owner)
	}
}

// TestDLGapsIncludeDeletedBearer: a bearer caller lists soft-deleted
// paths with include=deleted only with read and execute on the
// filesystem's root, as with showonly=deleted (403
// AuthorizationPermissionMismatch otherwise); the live ones it lists
// under the rules of List Blobs.
func TestDLGapsIncludeDeletedBearer(t *testing.T) {
	e, hc := startDLBearer(t)
	_, err := e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}})
	must(t, err)
	su := e.mkfs("bearer")
	_, err = su.NewDirectoryClient("sub").Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr("0755"), Umask: to.Ptr("0000")})
	must(t, err)
	for _, p := range []string{"sub/gone", "sub/kept"} {
		_, err = su.NewFileClient(p).Create(e.ctx, nil)
		must(t, err)
	}
	_, err = su.NewFileClient("sub/gone").Delete(e.ctx, nil)
	must(t, err)
	// The root lets others through, not list it.
	_, err = su.NewDirectoryClient("").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0711")})
	must(t, err)
	u1, err := azblob.NewClient(e.app.BlobURL, principalToken{oid: "u1", claim: "upn", name: "u1@contoso.com"}, &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}})
	must(t, err)
	list := func(deleted bool) ([]string, error) {
		page, err := u1.NewListBlobsFlatPager("bearer", &azblob.ListBlobsFlatOptions{Prefix: to.Ptr("sub/"), Include: container.ListBlobsInclude{Deleted: deleted}}).NextPage(e.ctx)
		if err != nil {
			return nil, err
		}
		var got []string
		for _, it := range page.Segment.BlobItems {
			got = append(got, listedEntry(it))
		}
		return got, nil
	}
	got, err := list(false)
	must(t, err)
	if strings.Join(got, ",") != "sub/kept" {
		t.Fatalf("live: %v", got)
	}
	_, err = list(true)
	wantRaw(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = su.NewDirectoryClient("").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0755")})
	must(t, err)
	got, err = list(true)
	must(t, err)
	if len(got) != 2 || !strings.HasPrefix(got[0], "sub/gone(deleted ") || got[1] != "sub/kept" {
		t.Fatalf("listed: %v", got)
	}
}
