package e2e

// The bytes of XML responses, not only what the Go SDK reads from them:
// the JavaScript SDKs parse with fast-xml-parser, which decodes only the
// five named entities, so a numeric reference such as &#34; reaches the
// application as those five characters. Azure writes quotes, apostrophes
// and line feeds literally, and so must Cerulean.

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// rawXML runs call with a context capturing the response and returns the
// response body as sent.
func rawXML(t *testing.T, ctx context.Context, call func(ctx context.Context) error) string {
	t.Helper()
	var resp *http.Response
	err := call(policy.WithCaptureResponse(ctx, &resp))
	var re *azcore.ResponseError
	if err != nil && !errAs(err, &re) {
		t.Fatal(err)
	}
	if resp == nil {
		t.Fatalf("no response captured (%v)", err)
	}
	body, perr := runtime.Payload(resp)
	if perr != nil {
		t.Fatal(perr)
	}
	return string(body)
}

func errAs(err error, re **azcore.ResponseError) bool {
	r, ok := err.(*azcore.ResponseError)
	if ok {
		*re = r
	}
	return ok
}

// noNumericRefs fails if body holds a numeric character reference other
// than &#xD; (a carriage return, which a literal one would not survive).
func noNumericRefs(t *testing.T, what, body string) {
	t.Helper()
	if strings.Contains(strings.ReplaceAll(body, "&#xD;", ""), "&#") {
		t.Errorf("%s holds a numeric character reference:\n%s", what, body)
	}
}

func TestXMLWireBlob(t *testing.T) {
	e := start(t)
	e.container("xmlwire")
	names := []string{`it's "quoted"`, "a&b<c>", "tab\tand\nline"}
	cc := e.c.ServiceClient().NewContainerClient("xmlwire")
	meta := map[string]*string{"note": to.Ptr(`say "hi" it's`)}
	put := map[string]string{}
	for _, n := range names {
		r, err := cc.NewBlockBlobClient(n).UploadBuffer(e.ctx, []byte("x"), &blockblob.UploadBufferOptions{Metadata: meta})
		must(t, err)
		put[n] = string(*r.ETag)
	}

	inc := container.ListBlobsInclude{Metadata: true}
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: inc})
	var listed []*container.BlobItem
	body := rawXML(t, e.ctx, func(ctx context.Context) error {
		page, err := pager.NextPage(ctx)
		if err == nil {
			listed = page.Segment.BlobItems
		}
		return err
	})
	noNumericRefs(t, "List Blobs", body)
	for _, want := range []string{`<Name>it's "quoted"</Name>`, "<Name>a&amp;b&lt;c&gt;</Name>", "<Name>tab\tand\nline</Name>", `<note>say "hi" it's</note>`} {
		if !strings.Contains(body, want) {
			t.Errorf("List Blobs lacks %q:\n%s", want, body)
		}
	}
	if len(listed) != len(names) {
		t.Fatalf("listed %d blobs, want %d", len(listed), len(names))
	}
	// Azure lists blob ETags unquoted (0x8D…), unlike the ETag header and
	// the container listing; either form satisfies If-Match.
	for _, it := range listed {
		etag := string(*it.Properties.ETag)
		if strings.Contains(etag, `"`) || `"`+etag+`"` != put[*it.Name] {
			t.Errorf("%q listed with ETag %s, uploaded as %s", *it.Name, etag, put[*it.Name])
		}
		if *it.Metadata["note"] != `say "hi" it's` {
			t.Errorf("%q metadata %q", *it.Name, *it.Metadata["note"])
		}
		_, err := cc.NewBlobClient(*it.Name).GetProperties(e.ctx, &blob.GetPropertiesOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: it.Properties.ETag}}})
		must(t, err)
	}

	body = rawXML(t, e.ctx, func(ctx context.Context) error {
		_, err := e.c.ServiceClient().NewListContainersPager(&service.ListContainersOptions{Prefix: to.Ptr("xmlwire")}).NextPage(ctx)
		return err
	})
	noNumericRefs(t, "List Containers", body)
	if !strings.Contains(body, `<Etag>"0x`) {
		t.Errorf("List Containers ETag not quoted as Azure's:\n%s", body)
	}

	body = rawXML(t, e.ctx, func(ctx context.Context) error {
		_, err := cc.NewBlobClient("missing").DownloadStream(ctx, nil)
		return err
	})
	noNumericRefs(t, "error body", body)
	// As the SDKs' recordings of the real service begin their error bodies.
	if !strings.HasPrefix(body, `<?xml version="1.0" encoding="utf-8"?><Error><Code>BlobNotFound</Code>`) {
		t.Errorf("error body starts differently from Azure's:\n%s", body)
	}
	if !strings.Contains(body, "\nRequestId:") {
		t.Errorf("error message without a literal line feed before RequestId:\n%s", body)
	}
}

func TestXMLWireQueue(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	text := `{"id":1,"who":"it's me"}` + "\n"
	quEnqueue(t, e.ctx, q, text, nil)
	body := rawXML(t, e.ctx, func(ctx context.Context) error {
		_, err := q.PeekMessages(ctx, nil)
		return err
	})
	noNumericRefs(t, "Peek Messages", body)
	if !strings.Contains(body, "<MessageText>"+text+"</MessageText>") {
		t.Errorf("message text not written literally:\n%s", body)
	}
	var got []*azqueue.DequeuedMessage
	body = rawXML(t, e.ctx, func(ctx context.Context) error {
		r, err := q.DequeueMessages(ctx, nil)
		if err == nil {
			got = r.Messages
		}
		return err
	})
	noNumericRefs(t, "Get Messages", body)
	if len(got) != 1 || *got[0].MessageText != text {
		t.Fatalf("dequeued %v", got)
	}
}

func TestXMLWireFile(t *testing.T) {
	e := startFile(t)
	s := e.share()
	e.mkfile(s, "it's.txt", 3)
	e.mkdir(s, `say hi & bye`)
	d := s.NewRootDirectoryClient()
	body := rawXML(t, e.ctx, func(ctx context.Context) error {
		_, err := d.NewListFilesAndDirectoriesPager(&directory.ListFilesAndDirectoriesOptions{
			Include: directory.ListFilesInclude{ETag: true, Timestamps: true}}).NextPage(ctx)
		return err
	})
	noNumericRefs(t, "List Directories and Files", body)
	for _, want := range []string{"<Name>it's.txt</Name>", "<Name>say hi &amp; bye</Name>", `<Etag>"0x`} {
		if !strings.Contains(body, want) {
			t.Errorf("listing lacks %q:\n%s", want, body)
		}
	}
	if bytes.Contains([]byte(body), []byte("&#39;")) {
		t.Error("apostrophe escaped")
	}
}
