package e2e

// End-to-end tests of the File service- and share-level operations
// through azfile: shares, listings, snapshots, ACLs, permissions, leases,
// stats and service properties.

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
)

func TestFileShareCreateGetSetDelete(t *testing.T) {
	e := startFile(t)
	s := e.svc.NewShareClient(fileName("props"))
	cr, err := s.Create(e.ctx, &share.CreateOptions{
		Quota:      to.Ptr(int32(1000)),
		AccessTier: to.Ptr(share.AccessTierCool),
		Metadata:   map[string]*string{"color": to.Ptr("blue")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cr.ETag == nil || cr.LastModified == nil {
		t.Fatalf("create response %+v", cr)
	}
	_, err = s.Create(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ShareAlreadyExists)

	p, err := s.GetProperties(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.Quota != 1000 || *p.AccessTier != "Cool" || *p.EnabledProtocols != "SMB" || *p.Metadata["Color"] != "blue" ||
		*p.LeaseState != "available" || *p.LeaseStatus != "unlocked" || p.AccessTierChangeTime == nil || !*p.EnableSMBDirectoryLease {
		t.Fatalf("properties %+v", p)
	}

	e.clock.Advance(time.Second)
	sp, err := s.SetProperties(e.ctx, &share.SetPropertiesOptions{Quota: to.Ptr(int32(1234)), AccessTier: to.Ptr(share.AccessTierHot), EnableSMBDirectoryLease: to.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if *sp.ETag == *p.ETag {
		t.Error("Set Share Properties kept the ETag")
	}
	_, err = s.SetProperties(e.ctx, &share.SetPropertiesOptions{Quota: to.Ptr(int32(-1))})
	wantFileCode(t, err, 400, fileerror.InvalidHeaderValue)
	if _, err := s.SetMetadata(e.ctx, &share.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}); err != nil {
		t.Fatal(err)
	}
	p, err = s.GetProperties(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *p.Quota != 1234 || *p.AccessTier != "Hot" || *p.EnableSMBDirectoryLease || len(p.Metadata) != 1 || *p.Metadata["K"] != "v" {
		t.Fatalf("after set: %+v", p)
	}

	if _, err := s.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
	// A share this small is purged before Delete Share answers
	// (reclaim.Inline): the name can be used again at once.
	if _, err := s.Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	p, err = s.GetProperties(e.ctx, nil)
	if err != nil || *p.Quota != 5120 || *p.AccessTier != "TransactionOptimized" || len(p.Metadata) != 0 {
		t.Fatalf("recreated share %+v %v", p, err)
	}
}

func TestFileShareList(t *testing.T) {
	e := startFile(t)
	prefix := fileName("lst")
	var want []string
	for _, n := range []string{"c", "a", "d", "b"} {
		s := e.svc.NewShareClient(prefix + n)
		if _, err := s.Create(e.ctx, &share.CreateOptions{Metadata: map[string]*string{"name": to.Ptr(n)}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, prefix+n)
	}
	sort.Strings(want)
	snap, err := e.svc.NewShareClient(prefix+"b").CreateSnapshot(e.ctx, &share.CreateSnapshotOptions{Metadata: map[string]*string{"snap": to.Ptr("yes")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.NewShareClient(fileName("other")).Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}

	// Paging without options: names only.
	var got []string
	pages := 0
	pager := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &prefix, MaxResults: to.Ptr(int32(3))})
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if *resp.Prefix != prefix || resp.ServiceEndpoint == nil || *resp.MaxResults != 3 {
			t.Errorf("page %+v", resp)
		}
		for _, sh := range resp.Shares {
			if sh.Snapshot != nil || sh.Metadata != nil || sh.Properties.ETag == nil || sh.Properties.LastModified == nil || *sh.Properties.Quota != 5120 {
				t.Errorf("item %+v %+v", sh, sh.Properties)
			}
			got = append(got, *sh.Name)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || pages != 2 {
		t.Fatalf("listed %v in %d pages, want %v", got, pages, want)
	}

	// Snapshots and metadata, pages of one.
	got = nil
	pager = e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &prefix, MaxResults: to.Ptr(int32(1)),
		Include: service.ListSharesInclude{Snapshots: true, Metadata: true, Deleted: true}})
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range resp.Shares {
			name := *sh.Name
			if sh.Snapshot != nil {
				if *sh.Snapshot != *snap.Snapshot || *sh.Metadata["snap"] != "yes" || sh.Metadata["name"] != nil {
					t.Errorf("snapshot item %+v", sh)
				}
				name += "@snap"
			} else if *sh.Metadata["name"] != strings.TrimPrefix(name, prefix) {
				t.Errorf("metadata of %s: %v", name, sh.Metadata)
			}
			if *sh.Properties.LeaseState != "available" || *sh.Properties.AccessTier != "TransactionOptimized" || *sh.Properties.EnabledProtocols != "SMB" {
				t.Errorf("properties of %s: %+v", name, sh.Properties)
			}
			got = append(got, name)
		}
	}
	if want := []string{want[0], want[1], want[1] + "@snap", want[2], want[3]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

func TestFileShareSnapshots(t *testing.T) {
	e := startFile(t)
	s := e.share()
	f := e.mkfile(s, "doc.txt", 3)
	e.put(f, 0, []byte("one"))
	e.mkdir(s, "dir")
	g := e.mkfile(s, "dir/inner.bin", 4)
	e.put(g, 0, []byte("abcd"))

	s1, err := s.CreateSnapshot(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Snapshot == nil || s1.ETag == nil || s1.LastModified == nil {
		t.Fatalf("snapshot response %+v", s1)
	}
	e.put(f, 0, []byte("two"))
	if _, err := g.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	s2, err := s.CreateSnapshot(e.ctx, &share.CreateSnapshotOptions{Metadata: map[string]*string{"tag": to.Ptr("second")}})
	if err != nil {
		t.Fatal(err)
	}
	if *s2.Snapshot == *s1.Snapshot {
		t.Fatal("two snapshots with one timestamp")
	}
	e.put(f, 0, []byte("333"))

	snap1, err := s.WithSnapshot(*s1.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	snap2, err := s.WithSnapshot(*s2.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sc   *share.Client
		path string
		want string
	}{
		{snap1, "doc.txt", "one"}, {snap1, "dir/inner.bin", "abcd"}, {snap2, "doc.txt", "two"}, {s, "doc.txt", "333"},
	} {
		if got := string(e.read(fileAt(c.sc, c.path), 0, 0)); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	_, err = fileAt(snap2, "dir/inner.bin").GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ResourceNotFound)
	// Snapshots are read-only.
	_, err = fileAt(snap1, "doc.txt").UploadRange(e.ctx, 0, fiBody([]byte("x")), nil)
	wantFileCode(t, err, 400, fileerror.ShareSnapshotOperationNotSupported)

	p, err := snap2.GetProperties(e.ctx, nil)
	if err != nil || *p.Metadata["Tag"] != "second" {
		t.Fatalf("snapshot properties %+v %v", p, err)
	}
	// A snapshot of a snapshot client is a snapshot of the share.
	s3, err := snap1.CreateSnapshot(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}

	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 409, fileerror.ShareHasSnapshots)
	if _, err := snap1.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = snap1.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
	if got := string(e.read(fileAt(snap2, "doc.txt"), 0, 0)); got != "two" {
		t.Errorf("after deleting snapshot 1: %q", got)
	}
	var snaps []string
	name := s.URL()[strings.LastIndex(s.URL(), "/")+1:]
	pager := e.svc.NewListSharesPager(&service.ListSharesOptions{Prefix: &name, Include: service.ListSharesInclude{Snapshots: true}})
	for pager.More() {
		resp, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range resp.Shares {
			if sh.Snapshot != nil {
				snaps = append(snaps, *sh.Snapshot)
			}
		}
	}
	if strings.Join(snaps, ",") != *s2.Snapshot+","+*s3.Snapshot {
		t.Errorf("snapshots %v", snaps)
	}
	if _, err := s.Delete(e.ctx, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeInclude)}); err != nil {
		t.Fatal(err)
	}
	_, err = snap2.GetProperties(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
}

func TestFileShareACL(t *testing.T) {
	e := startFile(t)
	s := e.share()
	start := time.Date(2031, 3, 31, 20, 0, 0, 0, time.UTC)
	expiry := start.Add(time.Hour)
	perm := share.AccessPolicyPermission{Read: true, List: true}.String()
	acl := []*share.SignedIdentifier{
		{ID: to.Ptr("first"), AccessPolicy: &share.AccessPolicy{Start: &start, Expiry: &expiry, Permission: &perm}},
		{ID: to.Ptr("second"), AccessPolicy: &share.AccessPolicy{Expiry: &expiry, Permission: to.Ptr("rcwdl")}},
	}
	if _, err := s.SetAccessPolicy(e.ctx, &share.SetAccessPolicyOptions{ShareACL: acl}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetAccessPolicy(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.SignedIdentifiers) != 2 || *got.SignedIdentifiers[0].ID != "first" || !got.SignedIdentifiers[0].AccessPolicy.Start.Equal(start) ||
		!got.SignedIdentifiers[1].AccessPolicy.Expiry.Equal(expiry) || *got.SignedIdentifiers[1].AccessPolicy.Permission != "rcwdl" || got.ETag == nil {
		t.Fatalf("ACL %+v", got)
	}
	var six []*share.SignedIdentifier
	for _, id := range []string{"1", "2", "3", "4", "5", "6"} {
		six = append(six, &share.SignedIdentifier{ID: to.Ptr(id), AccessPolicy: &share.AccessPolicy{Permission: to.Ptr("r")}})
	}
	_, err = s.SetAccessPolicy(e.ctx, &share.SetAccessPolicyOptions{ShareACL: six})
	wantFileCode(t, err, 400, fileerror.InvalidXMLDocument)
	_, err = s.SetAccessPolicy(e.ctx, &share.SetAccessPolicyOptions{ShareACL: []*share.SignedIdentifier{{ID: to.Ptr(strings.Repeat("a", 65))}}})
	wantFileCode(t, err, 400, fileerror.InvalidXMLDocument)
	if _, err := s.SetAccessPolicy(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetAccessPolicy(e.ctx, nil)
	if err != nil || len(got.SignedIdentifiers) != 0 {
		t.Fatalf("cleared ACL %+v %v", got, err)
	}
}

func TestFileSharePermissions(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const sddl = "O:S-1-5-32-548G:S-1-5-21-397955417-626881126-188441444-512D:(A;;RPWPCCDCLCSWRCWDWOGA;;;S-1-0-0)"
	cr, err := s.CreatePermission(e.ctx, sddl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cr.FilePermissionKey == nil || *cr.FilePermissionKey == "" {
		t.Fatalf("create permission %+v", cr)
	}
	gr, err := s.GetPermission(e.ctx, *cr.FilePermissionKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gr.Permission == nil || *gr.Permission != sddl {
		t.Fatalf("get permission %+v", gr)
	}
	_, err = s.CreatePermission(e.ctx, "not a descriptor", nil)
	wantFileCode(t, err, 400, "FileInvalidPermission")
	_, err = s.GetPermission(e.ctx, "12345*67890", nil)
	wantFileCode(t, err, 400, "FileInvalidPermissionKey")
	// Another share does not know the key.
	_, err = e.share().GetPermission(e.ctx, *cr.FilePermissionKey, nil)
	wantFileCode(t, err, 400, "FileInvalidPermissionKey")
}

func TestFileShareLease(t *testing.T) {
	e := startFile(t)
	s := e.share()
	const id1, id2 = "c820a799-76d7-4ee2-6e15-546f19325c2c", "a22be3fd-3a7e-47d8-8f14-64d8e4d5c1b5"
	lc, err := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr(id1)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := lease.NewShareClient(s, &lease.ShareClientOptions{LeaseID: to.Ptr(id2)})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := lc.Acquire(e.ctx, 15, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *ar.LeaseID != id1 {
		t.Fatalf("acquired %s", *ar.LeaseID)
	}
	_, err = other.Acquire(e.ctx, 60, nil)
	wantFileCode(t, err, 409, "LeaseAlreadyPresent")
	_, err = lc.Acquire(e.ctx, 61, nil)
	wantFileCode(t, err, 400, fileerror.InvalidHeaderValue)

	p, err := s.GetProperties(e.ctx, nil)
	if err != nil || *p.LeaseState != "leased" || *p.LeaseStatus != "locked" || *p.LeaseDuration != "fixed" {
		t.Fatalf("leased share %+v %v", p, err)
	}
	// Only delete is gated; a wrong ID is refused.
	if _, err := s.SetMetadata(e.ctx, &share.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetProperties(e.ctx, &share.GetPropertiesOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: to.Ptr(id2)}})
	wantFileCode(t, err, 412, "")
	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 412, "LeaseIdMissing")
	_, err = s.Delete(e.ctx, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: to.Ptr(id2)}})
	wantFileCode(t, err, 412, "LeaseIdMismatchWithShareOperation")

	// The fixed lease expires; renew brings it back.
	e.clock.Advance(16 * time.Second)
	if p, _ := s.GetProperties(e.ctx, nil); *p.LeaseState != "expired" {
		t.Fatalf("expired lease state %s", *p.LeaseState)
	}
	if _, err := lc.Renew(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Change(e.ctx, id2, nil); err != nil {
		t.Fatal(err)
	}
	if *lc.LeaseID() != id2 {
		t.Fatal("change did not move the client to the new id")
	}
	_, err = s.Delete(e.ctx, &share.DeleteOptions{LeaseAccessConditions: &share.LeaseAccessConditions{LeaseID: to.Ptr(id1)}})
	wantFileCode(t, err, 412, "LeaseIdMismatchWithShareOperation")

	// Break with a period: breaking, then broken; renew of a broken lease fails.
	br, err := lc.Break(e.ctx, &lease.ShareBreakOptions{BreakPeriod: to.Ptr(int32(5))})
	if err != nil || *br.LeaseTime != 5 {
		t.Fatalf("break %+v %v", br, err)
	}
	if p, _ := s.GetProperties(e.ctx, nil); *p.LeaseState != "breaking" {
		t.Fatalf("lease state %s", *p.LeaseState)
	}
	_, err = lc.Renew(e.ctx, nil)
	wantFileCode(t, err, 409, "LeaseIsBrokenAndCannotBeRenewed")
	_, err = s.Delete(e.ctx, nil)
	wantFileCode(t, err, 412, "LeaseIdMissing")
	e.clock.Advance(5 * time.Second)
	if p, _ := s.GetProperties(e.ctx, nil); *p.LeaseState != "broken" {
		t.Fatalf("lease state %s", *p.LeaseState)
	}
	// Infinite lease, released, then the share can be deleted.
	if _, err := other.Acquire(e.ctx, -1, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.GetProperties(e.ctx, nil); *p.LeaseDuration != "infinite" {
		t.Fatalf("lease duration %s", *p.LeaseDuration)
	}
	if _, err := other.Release(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func TestFileShareSnapshotLease(t *testing.T) {
	e := startFile(t)
	s := e.share()
	sr, err := s.CreateSnapshot(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := lease.NewShareClient(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Acquire(e.ctx, -1, &lease.ShareAcquireOptions{ShareSnapshot: sr.Snapshot}); err != nil {
		t.Fatal(err)
	}
	snap, _ := s.WithSnapshot(*sr.Snapshot)
	p, err := snap.GetProperties(e.ctx, nil)
	if err != nil || *p.LeaseState != "leased" {
		t.Fatalf("snapshot lease %+v %v", p, err)
	}
	if p, _ := s.GetProperties(e.ctx, nil); *p.LeaseState != "available" {
		t.Fatalf("share lease state %s", *p.LeaseState)
	}
	_, err = s.Delete(e.ctx, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeInclude)})
	wantFileCode(t, err, 412, "LeaseIdMissing")
	if _, err := s.Delete(e.ctx, &share.DeleteOptions{DeleteSnapshots: to.Ptr(share.DeleteSnapshotsOptionTypeIncludeLeased)}); err != nil {
		t.Fatal(err)
	}
}

func TestFileShareStats(t *testing.T) {
	e := startFile(t)
	s := e.share()
	st, err := s.GetStatistics(e.ctx, nil)
	if err != nil || *st.ShareUsageBytes != 0 {
		t.Fatalf("empty share stats %+v %v", st, err)
	}
	e.mkdir(s, "d")
	e.mkfile(s, "d/big", 1<<40) // sparse: counted at its size
	f := e.mkfile(s, "small", 10)
	e.put(f, 0, []byte("0123456789"))
	st, err = s.GetStatistics(e.ctx, nil)
	if err != nil || *st.ShareUsageBytes != 1<<40+10 {
		t.Fatalf("stats %+v %v", st, err)
	}
	_, err = e.svc.NewShareClient(fileName("none")).GetStatistics(e.ctx, nil)
	wantFileCode(t, err, 404, fileerror.ShareNotFound)
}

func TestFileServiceProperties(t *testing.T) {
	e := startFile(t)
	def, err := e.svc.GetProperties(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.HourMetrics == nil || def.MinuteMetrics == nil || def.Protocol == nil || def.Protocol.Smb == nil {
		t.Fatalf("defaults %+v", def)
	}
	_, err = e.svc.SetProperties(e.ctx, &service.SetPropertiesOptions{
		HourMetrics: &service.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
			RetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(2))}},
		CORS: []*service.CORSRule{{AllowedOrigins: to.Ptr("http://example.com"), AllowedMethods: to.Ptr("GET,PUT"),
			AllowedHeaders: to.Ptr("x-ms-*"), ExposedHeaders: to.Ptr("x-ms-*"), MaxAgeInSeconds: to.Ptr(int32(30))}},
		Protocol: &service.ProtocolSettings{Smb: &service.SMBSettings{Multichannel: &service.SMBMultichannel{Enabled: to.Ptr(true)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.GetProperties(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !*got.HourMetrics.Enabled || *got.HourMetrics.RetentionPolicy.Days != 2 || *got.MinuteMetrics.Enabled ||
		len(got.CORS) != 1 || *got.CORS[0].AllowedOrigins != "http://example.com" || !*got.Protocol.Smb.Multichannel.Enabled {
		t.Fatalf("properties %+v", got)
	}
	if _, err := e.svc.SetProperties(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	// CORS applies to the File endpoint.
	req, _ := http.NewRequest(http.MethodOptions, e.app.FileURL+"/"+fileName("any")+"?restype=share", nil)
	req.Header.Set("Origin", "http://example.com")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://example.com" {
		t.Fatalf("preflight %d %v", resp.StatusCode, resp.Header)
	}
}
