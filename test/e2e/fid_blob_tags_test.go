package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// TestFidBlobTagsUnquotedNames: tag names may be written without double
// quotes (tag1='val1'), as azure-sdk-for-js's tests recorded against
// Azure do (blobclient.spec.ts "getTags with tagConditions",
// containerclient.spec.ts "findBlobsByTags"), in Find Blobs by Tags on
// the account and the container and in x-ms-if-tags; the quoted form
// and the syntax errors stay.
func TestFidBlobTagsUnquotedNames(t *testing.T) {
	b := newBlobT(t)
	tags := map[string]string{"tag1": "val1", "tag2": "val2"}
	b.put("t", []byte("body"), &blockblob.UploadOptions{Tags: tags})
	b.put("u", []byte("body"), &blockblob.UploadOptions{Tags: map[string]string{"tag1": "other"}})

	names := func(items []string) string { sort.Strings(items); return fmt.Sprint(items) }
	for _, where := range []string{`tag1='val1'`, `tag1 = 'val1' AND "tag2"='val2'`, `"tag1"='val1'`} {
		r, err := b.cli.ServiceClient().FilterBlobs(b.ctx, where, nil)
		must(t, err)
		var got []string
		for _, it := range r.Blobs {
			got = append(got, *it.ContainerName+"/"+*it.Name)
		}
		if names(got) != "[cont/t]" {
			t.Fatalf("account where %s: %v", where, got)
		}
		cr, err := b.cli.ServiceClient().NewContainerClient(b.cont).FilterBlobs(b.ctx, where, &container.FilterBlobsOptions{})
		must(t, err)
		got = got[:0]
		for _, it := range cr.Blobs {
			got = append(got, *it.Name)
		}
		if names(got) != "[t]" {
			t.Fatalf("container where %s: %v", where, got)
		}
	}
	_, err := b.cli.ServiceClient().FilterBlobs(b.ctx, `tag-1='val1'`, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)

	// x-ms-if-tags: evaluated, met or not.
	r, err := b.bb("t").GetTags(b.ctx, &blob.GetTagsOptions{BlobAccessConditions: bxIfTags(`tag1='val1'`)})
	must(t, err)
	if len(r.BlobTagSet) != 2 {
		t.Fatalf("tags %v", r.BlobTagSet)
	}
	_, err = b.bb("t").GetTags(b.ctx, &blob.GetTagsOptions{BlobAccessConditions: bxIfTags(`tag1='val11'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = b.bb("t").DownloadStream(b.ctx, &blob.DownloadStreamOptions{AccessConditions: bxIfTags(`tag1='val1' AND (tag2<>'x' OR tag3='y')`)})
	must(t, err)

	ab := b.cli.ServiceClient().NewContainerClient(b.cont).NewAppendBlobClient("ap")
	_, err = ab.Create(b.ctx, &appendblob.CreateOptions{Tags: tags})
	must(t, err)
	_, err = ab.AppendBlock(b.ctx, bxBody([]byte("123456")), &appendblob.AppendBlockOptions{AccessConditions: bxIfTags(`tag1='val2'`)})
	wantCode(t, err, http.StatusPreconditionFailed, bloberror.ConditionNotMet)
	_, err = ab.AppendBlock(b.ctx, bxBody([]byte("123456")), &appendblob.AppendBlockOptions{AccessConditions: bxIfTags(`tag1='val1'`)})
	must(t, err)
	p, err := ab.GetProperties(b.ctx, nil)
	must(t, err)
	if *p.ContentLength != 6 {
		t.Fatalf("append blob length %d", *p.ContentLength)
	}
	// Malformed conditions are still 400 before anything happens.
	for _, bad := range []string{`tag1=val1`, `tag-1='val1'`, `tag1 'val1'`} {
		_, err = ab.AppendBlock(b.ctx, bxBody([]byte("x")), &appendblob.AppendBlockOptions{AccessConditions: bxIfTags(bad)})
		wantCode(t, err, http.StatusBadRequest, bloberror.InvalidHeaderValue)
	}
}

// TestFidBlobTagsWhereLimits: a where= expression may name up to 10
// unique tags ("A filter can contain up to 10 tags", blob index
// documentation), however many comparisons it makes, and @container may
// be used in Find Blobs by Tags within a container as on the account
// (naming another container finds nothing).
func TestFidBlobTagsWhereLimits(t *testing.T) {
	b := newBlobT(t)
	tags := map[string]string{}
	var ten []string
	for i := 0; i < 10; i++ {
		tags[fmt.Sprintf("k%d", i)] = "v"
		ten = append(ten, fmt.Sprintf(`"k%d" = 'v'`, i))
	}
	b.put("t", []byte("body"), &blockblob.UploadOptions{Tags: tags})
	cc := b.cli.ServiceClient().NewContainerClient(b.cont)
	find := func(where string) (string, error) {
		r, err := cc.FilterBlobs(b.ctx, where, &container.FilterBlobsOptions{})
		if err != nil {
			return "", err
		}
		var got []string
		for _, it := range r.Blobs {
			got = append(got, *it.Name)
		}
		return fmt.Sprint(got), nil
	}
	all := strings.Join(ten, " AND ")
	for where, want := range map[string]string{
		all + ` AND "k0" >= 'a' AND "k0" <= 'z' AND "k1" > 'a'`: "[t]", // 13 comparisons, 10 tags
		`@container = '` + b.cont + `' AND "k3" = 'v'`:          "[t]", // @container in a container
		all + ` AND @container = '` + b.cont + `'`:              "[t]", // 10 tags and @container
		`@container = 'other' AND "k3" = 'v'`:                   "[]",  // another container
	} {
		got, err := find(where)
		if err != nil || got != want {
			t.Fatalf("where %s: %s %v, want %s", where, got, err, want)
		}
	}
	_, err := find(all + ` AND "k10" = 'v'`)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
	_, err = b.cli.ServiceClient().FilterBlobs(b.ctx, all+` AND "k10" = 'v'`, nil)
	wantCode(t, err, http.StatusBadRequest, bloberror.InvalidQueryParameterValue)
}
