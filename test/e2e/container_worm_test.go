package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// wormAdmin calls the container-level WORM admin endpoint
// (/.cerulean/worm/{account}/{container}/...) with plain net/http,
// signed with Shared Key over the path without /.cerulean/worm.
type wormAdmin struct {
	t      *testing.T
	origin string      // scheme://host:port of the Blob listener
	clk    *clock.Fake // the server's, whose time requests are dated with (nil: the real time)
}

func newWORMAdmin(t *testing.T, blobURL string, clk *clock.Fake) *wormAdmin {
	return &wormAdmin{t: t, origin: strings.TrimSuffix(blobURL, "/"+app.DevAccount), clk: clk}
}

// startWORM starts a Blob server on a fake clock with an azblob client
// that dates its requests by that clock (sdDatePolicy), so the test may
// move days on.
func startWORM(t *testing.T) (*env, *wormAdmin) {
	a, clk := startAppWith(t, func(*app.Config) {})
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{clk})
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	must(t, err)
	return &env{t: t, app: a, clock: clk, c: c, ctx: context.Background()}, newWORMAdmin(t, a.BlobURL, clk)
}

// do sends method to path (after /{account}/) with body (nil: none) and
// If-Match (""), and returns the status, x-ms-error-code and JSON answer.
func (w *wormAdmin) do(method, path, ifMatch string, body any) (int, string, map[string]any) {
	w.t.Helper()
	var rd io.Reader
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			w.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	r, err := http.NewRequest(method, w.origin+"/.cerulean/worm/"+app.DevAccount+"/"+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if ifMatch != "" {
		r.Header.Set("If-Match", ifMatch)
	}
	date := time.Now()
	if w.clk != nil {
		date = w.clk.Now()
	}
	r.Header.Set("x-ms-date", date.UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2021-12-02")
	signed := r.Clone(context.Background())
	if len(raw) > 0 {
		signed.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	}
	signed.URL.Path = "/" + app.DevAccount + "/" + path
	signed.RequestURI = signed.URL.RequestURI()
	key, _ := base64.StdEncoding.DecodeString(app.DevKey)
	sts := auth.StringToSign(signed, auth.Blob, auth.SharedKey, app.DevAccount, auth.CultureOrder)
	r.Header.Set("Authorization", "SharedKey "+app.DevAccount+":"+auth.ComputeSignature(key, sts))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			w.t.Fatalf("%s %s: %d %q", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), out
}

// ok is do that must answer 200; it returns the answer's etag.
func (w *wormAdmin) ok(method, path, ifMatch string, body any) string {
	w.t.Helper()
	st, code, out := w.do(method, path, ifMatch, body)
	if st != http.StatusOK {
		w.t.Fatalf("%s %s: %d %s %v", method, path, st, code, out)
	}
	etag, _ := out["etag"].(string)
	return etag
}

// refused is do that must answer status and code.
func (w *wormAdmin) refused(status int, code, method, path, ifMatch string, body any) {
	w.t.Helper()
	st, c, out := w.do(method, path, ifMatch, body)
	if st != status || c != code {
		w.t.Fatalf("%s %s: %d %s %v, want %d %s", method, path, st, c, out, status, code)
	}
}

func policyBody(days int, extra map[string]any) map[string]any {
	p := map[string]any{"immutabilityPeriodSinceCreationInDays": days}
	for k, v := range extra {
		p[k] = v
	}
	return map[string]any{"properties": p}
}

// TestContainerWORM walks a container through an Unlocked time-based
// retention policy, its lock and extensions, a legal hold and the expiry
// on the server's clock, through the admin endpoint and azblob, checking
// every refusal by status and code (blob/containerworm.go).
func TestContainerWORM(t *testing.T) {
	e, adm := startWORM(t)
	e.container("worm")
	cc := e.c.ServiceClient().NewContainerClient("worm")
	old := cc.NewBlockBlobClient("old")
	must2(old.UploadBuffer(e.ctx, []byte("before the policy"), nil))
	app0 := cc.NewAppendBlobClient("log")
	must2(app0.Create(e.ctx, nil))
	pb := cc.NewPageBlobClient("pages")
	must2(pb.Create(e.ctx, 1024, nil))

	// Unsigned, the endpoint refuses.
	r, _ := http.NewRequest(http.MethodGet, adm.origin+"/.cerulean/worm/"+app.DevAccount+"/worm", nil)
	resp, err := http.DefaultClient.Do(r)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("unsigned: %d", resp.StatusCode)
	}

	pol := "worm/immutabilityPolicies/default"
	// Validation: the period's range and the exclusive append flags.
	adm.refused(400, "InvalidInput", http.MethodPut, pol, "", policyBody(0, nil))
	adm.refused(400, "InvalidInput", http.MethodPut, pol, "", policyBody(146001, nil))
	adm.refused(400, "InvalidInput", http.MethodPut, pol, "", policyBody(1, map[string]any{"allowProtectedAppendWrites": true, "allowProtectedAppendWritesAll": true}))
	adm.refused(404, "ResourceNotFound", http.MethodGet, pol, "", nil)
	adm.refused(404, "ContainerNotFound", http.MethodPut, "nosuch/immutabilityPolicies/default", "", policyBody(1, nil))

	// Create Unlocked; the container reports it.
	etag := adm.ok(http.MethodPut, pol, "", policyBody(1, nil))
	cp := must2(cc.GetProperties(e.ctx, nil))
	if cp.HasImmutabilityPolicy == nil || !*cp.HasImmutabilityPolicy || cp.HasLegalHold == nil || *cp.HasLegalHold {
		t.Fatalf("Get Container Properties: policy %v hold %v", cp.HasImmutabilityPolicy, cp.HasLegalHold)
	}
	lp := must2(e.c.ServiceClient().NewListContainersPager(nil).NextPage(e.ctx))
	if it := lp.ContainerItems[0]; it.Properties.HasImmutabilityPolicy == nil || !*it.Properties.HasImmutabilityPolicy || *it.Properties.HasLegalHold {
		t.Fatalf("List Containers: policy %v hold %v", it.Properties.HasImmutabilityPolicy, it.Properties.HasLegalHold)
	}
	// Updates need If-Match on the current ETag.
	adm.refused(400, "MissingRequiredHeader", http.MethodPut, pol, "", policyBody(2, nil))
	adm.refused(412, "ConditionNotMet", http.MethodPut, pol, `"0x0"`, policyBody(2, nil))
	etag = adm.ok(http.MethodPut, pol, etag, policyBody(2, nil))

	// Protected: every change of an existing blob is refused.
	bc := old.BlobClient()
	immutable := func(err error) { t.Helper(); wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy) }
	_, err = old.UploadBuffer(e.ctx, []byte("overwrite"), nil)
	immutable(err)
	_, err = old.Upload(e.ctx, streamOf("put blob"), nil)
	immutable(err)
	_, err = bc.Delete(e.ctx, nil)
	immutable(err)
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	immutable(err)
	_, err = bc.SetHTTPHeaders(e.ctx, blob.HTTPHeaders{BlobContentType: to.Ptr("text/plain")}, nil)
	immutable(err)
	_, err = bc.CreateSnapshot(e.ctx, nil)
	immutable(err)
	src := cc.NewBlockBlobClient("src")
	must2(src.UploadBuffer(e.ctx, []byte("copy source"), nil))
	_, err = bc.CopyFromURL(e.ctx, src.URL(), nil)
	immutable(err)
	_, err = pb.UploadPages(e.ctx, streamOf(strings.Repeat("p", 512)), blob.HTTPRange{Offset: 0, Count: 512}, nil)
	immutable(err)
	// The From URL writes and the asynchronous copy, from a public
	// container's blob.
	_, err = e.c.CreateContainer(e.ctx, "pubsrc", &azblob.CreateContainerOptions{Access: to.Ptr(azblob.PublicAccessTypeBlob)})
	must(t, err)
	pub := e.c.ServiceClient().NewContainerClient("pubsrc").NewBlockBlobClient("p")
	must2(pub.UploadBuffer(e.ctx, bytes.Repeat([]byte("s"), 512), nil))
	_, err = old.UploadBlobFromURL(e.ctx, pub.URL(), nil)
	immutable(err)
	_, err = bc.StartCopyFromURL(e.ctx, pub.URL(), nil)
	immutable(err)
	_, err = app0.AppendBlockFromURL(e.ctx, pub.URL(), nil)
	immutable(err)
	_, err = pb.UploadPagesFromURL(e.ctx, pub.URL(), 0, 0, 512, nil)
	immutable(err)
	_, err = pb.ClearPages(e.ctx, blob.HTTPRange{Offset: 0, Count: 512}, nil)
	immutable(err)
	_, err = app0.AppendBlock(e.ctx, streamOf("line\n"), nil)
	immutable(err)
	// Put Block List over it, even keeping its blocks.
	id := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
	must2(old.StageBlock(e.ctx, id, streamOf("staged"), nil))
	_, err = old.CommitBlockList(e.ctx, []string{id}, nil)
	immutable(err)
	// Reads, tags, tiers and new blobs stay allowed.
	must2(bc.GetProperties(e.ctx, nil))
	must2(bc.SetTags(e.ctx, map[string]string{"t": "1"}, nil))
	must2(bc.SetTier(e.ctx, blob.AccessTierCool, nil))
	fresh := cc.NewBlockBlobClient("fresh")
	must2(fresh.UploadBuffer(e.ctx, []byte("new"), nil))
	_, err = fresh.UploadBuffer(e.ctx, []byte("again"), nil)
	immutable(err)

	// allowProtectedAppendWrites lets appends through, nothing else.
	etag = adm.ok(http.MethodPut, pol, etag, policyBody(2, map[string]any{"allowProtectedAppendWrites": true}))
	must2(app0.AppendBlock(e.ctx, streamOf("line 1\n"), nil))
	_, err = old.CommitBlockList(e.ctx, []string{id}, nil)
	immutable(err)
	// allowProtectedAppendWritesAll: on the Blob API it allows what
	// allowProtectedAppendWrites does ("The Blob Storage API doesn't
	// provide a way" to add blocks to a block blob).
	etag = adm.ok(http.MethodPut, pol, etag, policyBody(2, map[string]any{"allowProtectedAppendWritesAll": true}))
	must2(app0.AppendBlock(e.ctx, streamOf("line 2\n"), nil))
	grow := cc.NewBlockBlobClient("grow")
	id0 := base64.StdEncoding.EncodeToString([]byte("blk-0000"))
	must2(grow.StageBlock(e.ctx, id0, streamOf("a"), nil))
	must2(grow.CommitBlockList(e.ctx, []string{id0}, nil))
	must2(grow.StageBlock(e.ctx, id, streamOf("b"), nil))
	_, err = grow.CommitBlockList(e.ctx, []string{id0, id}, nil)
	immutable(err)
	etag = adm.ok(http.MethodPut, pol, etag, policyBody(2, nil))

	// Container delete refused while it has blobs.
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)

	// Lock: no more updates or deletes; extend only to a longer period,
	// at most five times.
	adm.refused(412, "ConditionNotMet", http.MethodPost, pol+"/lock", `"0x0"`, nil)
	adm.refused(409, "InvalidOperation", http.MethodPost, pol+"/extend", etag, policyBody(3, nil))
	etag = adm.ok(http.MethodPost, pol+"/lock", etag, nil)
	adm.refused(409, "InvalidOperation", http.MethodPut, pol, etag, policyBody(5, nil))
	adm.refused(409, "InvalidOperation", http.MethodDelete, pol, etag, nil)
	adm.refused(409, "InvalidOperation", http.MethodPost, pol+"/extend", etag, policyBody(2, nil))
	adm.refused(400, "InvalidInput", http.MethodPost, pol+"/extend", etag, policyBody(3, map[string]any{"allowProtectedAppendWrites": true}))
	days := 2
	for i := 0; i < 5; i++ {
		days++
		etag = adm.ok(http.MethodPost, pol+"/extend", etag, policyBody(days, nil))
	}
	adm.refused(409, "InvalidOperation", http.MethodPost, pol+"/extend", etag, policyBody(days+1, nil))
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerImmutabilityPolicyLocked"))
	adm.refused(409, "ContainerImmutabilityPolicyLocked", http.MethodDelete, "worm", "", nil)

	// A legal hold wins over the policy; it takes tags.
	adm.refused(400, "InvalidInput", http.MethodPost, "worm/setLegalHold", "", map[string]any{"tags": []string{"x"}})
	adm.ok(http.MethodPost, "worm/setLegalHold", "", map[string]any{"tags": []string{"case1", "case2"}})
	cp = must2(cc.GetProperties(e.ctx, nil))
	if cp.HasLegalHold == nil || !*cp.HasLegalHold {
		t.Fatal("x-ms-has-legal-hold not true")
	}
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerHasLegalHold"))

	// Past the retention (8 days from the blobs' creation) the hold
	// still refuses everything until all its tags are cleared.
	e.clock.Advance(8*24*time.Hour + time.Minute)
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	_, err = app0.AppendBlock(e.ctx, streamOf("held\n"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	// The hold's append flag does not lift the policy, which has none.
	adm.ok(http.MethodPost, "worm/setLegalHold", "", map[string]any{"tags": []string{"case1"}, "allowProtectedAppendWritesAll": true})
	_, err = app0.AppendBlock(e.ctx, streamOf("held, appending\n"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	adm.ok(http.MethodPost, "worm/clearLegalHold", "", map[string]any{"tags": []string{"case1"}})
	_, err = bc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold")) // case2 remains
	adm.ok(http.MethodPost, "worm/clearLegalHold", "", map[string]any{"tags": []string{"case2"}})
	cp = must2(cc.GetProperties(e.ctx, nil))
	if *cp.HasLegalHold {
		t.Fatal("hold still reported after its tags were cleared")
	}
	// Past the retention a blob may be deleted but still not changed
	// while the policy exists.
	_, err = bc.SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	immutable(err)
	_, err = old.UploadBuffer(e.ctx, []byte("overwrite after expiry"), nil)
	immutable(err)
	_, err = app0.AppendBlock(e.ctx, streamOf("late\n"), nil)
	immutable(err)
	_, err = bc.CreateSnapshot(e.ctx, nil)
	immutable(err)
	must2(bc.Delete(e.ctx, nil))
	// A blob created now may not be deleted for the period.
	late := cc.NewBlockBlobClient("late")
	must2(late.UploadBuffer(e.ctx, []byte("late"), nil))
	_, err = late.BlobClient().Delete(e.ctx, nil)
	immutable(err)

	// The container with a locked policy is deleted once empty.
	e.clock.Advance(8*24*time.Hour + time.Minute)
	pager := cc.NewListBlobsFlatPager(nil)
	for pager.More() {
		page := must2(pager.NextPage(e.ctx))
		for _, it := range page.Segment.BlobItems {
			must2(cc.NewBlobClient(*it.Name).Delete(e.ctx, &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}))
		}
	}
	// Empty, it is still not deleted on the data plane, only by the
	// control plane's delete.
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerImmutabilityPolicyLocked"))
	if st, code, _ := adm.do(http.MethodDelete, "worm", "", nil); st != http.StatusOK {
		t.Fatalf("control plane delete: %d %s", st, code)
	}
	_, err = cc.GetProperties(e.ctx, nil)
	wantCode(t, err, http.StatusNotFound, bloberror.ContainerNotFound)
}

// TestContainerWORMUnlockedDelete: an Unlocked policy is deleted under
// If-Match, after which the container's blobs may change again; the
// container itself is deleted once it has no policy.
func TestContainerWORMUnlockedDelete(t *testing.T) {
	e, adm := startWORM(t)
	e.container("unl")
	cc := e.c.ServiceClient().NewContainerClient("unl")
	bb := cc.NewBlockBlobClient("b")
	must2(bb.UploadBuffer(e.ctx, []byte("x"), nil))
	pol := "unl/immutabilityPolicies/default"
	etag := adm.ok(http.MethodPut, pol, "", policyBody(30, nil))
	_, err := bb.BlobClient().Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	adm.refused(400, "MissingRequiredHeader", http.MethodDelete, pol, "", nil)
	adm.refused(412, "ConditionNotMet", http.MethodDelete, pol, `"0x0"`, nil)
	st, _, out := adm.do(http.MethodDelete, pol, etag, nil)
	if props, _ := out["properties"].(map[string]any); st != 200 || props["immutabilityPeriodSinceCreationInDays"] != float64(0) {
		t.Fatalf("delete answered %d %v", st, out)
	}
	adm.refused(412, "ConditionNotMet", http.MethodDelete, pol, etag, nil)
	if cp := must2(cc.GetProperties(e.ctx, nil)); *cp.HasImmutabilityPolicy {
		t.Fatal("policy still reported after its deletion")
	}
	must2(bb.UploadBuffer(e.ctx, []byte("y"), nil))

	// A legal hold alone, allowing protected appends.
	ab := cc.NewAppendBlobClient("log")
	must2(ab.Create(e.ctx, nil))
	adm.ok(http.MethodPost, "unl/setLegalHold", "", map[string]any{"tags": []string{"lit2026"}, "allowProtectedAppendWritesAll": true})
	must2(ab.AppendBlock(e.ctx, streamOf("held, appending\n"), nil))
	_, err = ab.BlobClient().SetMetadata(e.ctx, map[string]*string{"k": to.Ptr("v")}, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	_, err = bb.BlobClient().Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	_, err = cc.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerHasLegalHold"))
	// Without the flag appends stop too.
	adm.ok(http.MethodPost, "unl/setLegalHold", "", map[string]any{"tags": []string{"lit2026"}})
	_, err = ab.AppendBlock(e.ctx, streamOf("refused\n"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	st, _, out = adm.do(http.MethodPost, "unl/clearLegalHold", "", map[string]any{"tags": []string{"LIT2026"}})
	if st != 200 || out["hasLegalHold"] != false {
		t.Fatalf("clear: %d %v", st, out)
	}
	must2(cc.Delete(e.ctx, nil))
}

// TestContainerWORMRestart: a container's policy and legal hold are kept
// in the store and enforced after a restart.
func TestContainerWORMRestart(t *testing.T) {
	cfg := backendConfig(t)
	if cfg.InMemory {
		t.Skip("the in-memory store does not outlive its process")
	}
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort = 0, -1, -1, -1
	start := func() *app.App {
		a, err := app.Start(cfg)
		must(t, err)
		return a
	}
	stop := func(a *app.App) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		must(t, a.Close(ctx))
	}
	a := start()
	c := client(t, a.BlobURL, app.DevKey)
	ctx := context.Background()
	must2(c.CreateContainer(ctx, "keep", nil))
	bb := c.ServiceClient().NewContainerClient("keep").NewBlockBlobClient("b")
	must2(bb.UploadBuffer(ctx, []byte("x"), nil))
	adm := newWORMAdmin(t, a.BlobURL, nil)
	etag := adm.ok(http.MethodPut, "keep/immutabilityPolicies/default", "", policyBody(7, nil))
	etag = adm.ok(http.MethodPost, "keep/immutabilityPolicies/default/lock", etag, nil)
	adm.ok(http.MethodPost, "keep/setLegalHold", "", map[string]any{"tags": []string{"audit"}})
	stop(a)

	a = start()
	defer stop(a)
	c = client(t, a.BlobURL, app.DevKey)
	adm = newWORMAdmin(t, a.BlobURL, nil)
	cc := c.ServiceClient().NewContainerClient("keep")
	bb = cc.NewBlockBlobClient("b")
	cp := must2(cc.GetProperties(ctx, nil))
	if !*cp.HasImmutabilityPolicy || !*cp.HasLegalHold {
		t.Fatalf("after the restart: policy %v hold %v", *cp.HasImmutabilityPolicy, *cp.HasLegalHold)
	}
	st, _, out := adm.do(http.MethodGet, "keep/immutabilityPolicies/default", "", nil)
	props, _ := out["properties"].(map[string]any)
	if st != 200 || out["etag"] != etag || props["state"] != "Locked" || props["immutabilityPeriodSinceCreationInDays"] != float64(7) {
		t.Fatalf("policy after the restart: %d %v", st, out)
	}
	_, err := bb.UploadBuffer(ctx, []byte("y"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("BlobImmutableDueToLegalHold"))
	_, err = cc.Delete(ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.Code("ContainerHasLegalHold"))
}

// TestContainerWORMVersions: with blob versioning on, a previous version
// of a blob in a container with a policy is not deleted before its
// retention ends.
func TestContainerWORMVersions(t *testing.T) {
	a, clk := startAppWith(t, func(c *app.Config) { c.BlobVersioning = true })
	e := &env{t: t, app: a, clock: clk, c: client(t, a.BlobURL, app.DevKey), ctx: context.Background()}
	adm := newWORMAdmin(t, a.BlobURL, clk)
	e.container("ver")
	bb := e.c.ServiceClient().NewContainerClient("ver").NewBlockBlobClient("b")
	first := must2(bb.UploadBuffer(e.ctx, []byte("one"), nil))
	must2(bb.UploadBuffer(e.ctx, []byte("two"), nil))
	adm.ok(http.MethodPut, "ver/immutabilityPolicies/default", "", policyBody(1, nil))
	prev, err := bb.BlobClient().WithVersionID(*first.VersionID)
	must(t, err)
	_, err = prev.Delete(e.ctx, nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
	_, err = bb.UploadBuffer(e.ctx, []byte("three"), nil)
	wantCode(t, err, http.StatusConflict, bloberror.BlobImmutableDueToPolicy)
}
