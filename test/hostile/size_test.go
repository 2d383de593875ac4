package hostile

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSizes: oversized headers, metadata, bodies and counts are refused
// with Azure's codes, from the declared length where there is one (no
// body is sent for those: the answer must not wait for it), and the
// server stays responsive.
func TestSizes(t *testing.T) {
	s := start(t, nil)
	dev := "/" + app.DevAccount
	bb := http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	s.must(s.do("queue", "PUT", dev+"/queue1", nil, nil, app.DevAccount), 201)
	s.must(s.do("file", "PUT", dev+"/share?restype=share", nil, nil, app.DevAccount), 201)
	s.must(s.do("table", "POST", dev+"/Tables", hdr("Content-Type", "application/json"), []byte(`{"TableName":"table1"}`), app.DevAccount), 201)

	// Declared lengths past Azure's limits, no body sent: refused at once.
	declared := []struct {
		name, svc, method, target string
		hdr                       http.Header
		length                    int64
		status                    int
		code                      string
	}{
		{"Put Blob over 5000 MiB", "blob", "PUT", dev + "/cont/big", bb, 5000<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Put Block over 4000 MiB", "blob", "PUT", dev + "/cont/big?comp=block&blockid=" + url.QueryEscape("QUFBQQ=="), nil, 4000<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Put Block List over 8 MiB", "blob", "PUT", dev + "/cont/big?comp=blocklist", nil, 8<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Append Block over 100 MiB", "blob", "PUT", dev + "/cont/big?comp=appendblock", nil, 100<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Put Page over 4 MiB", "blob", "PUT", dev + "/cont/big?comp=page", hdr("X-Ms-Page-Write", "update", "X-Ms-Range", "bytes=0-4194815"), 4<<20 + 512, 413, "RequestBodyTooLarge"},
		{"Blob Batch over 4 MiB", "blob", "POST", dev + "?comp=batch", hdr("Content-Type", "multipart/mixed; boundary=b"), 4<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Put Message over 8 x 64 KiB", "queue", "POST", dev + "/queue1/messages", nil, 512<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Put Range over 4 MiB", "file", "PUT", dev + "/share/f?comp=range", hdr("X-Ms-Write", "update", "X-Ms-Range", "bytes=0-4194304"), 4<<20 + 1, 413, "RequestBodyTooLarge"},
		{"Insert Entity over 4 MiB", "table", "POST", dev + "/table1", hdr("Content-Type", "application/json"), 4<<20 + 1, 413, "RequestBodyTooLarge"},
		// The 64 KiB XML (and JSON) bodies.
		{"Set Blob Service Properties over 64 KiB", "blob", "PUT", dev + "?restype=service&comp=properties", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Queue Service Properties over 64 KiB", "queue", "PUT", dev + "?restype=service&comp=properties", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Table Service Properties over 64 KiB", "table", "PUT", dev + "?restype=service&comp=properties", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set File Service Properties over 64 KiB", "file", "PUT", dev + "?restype=service&comp=properties", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Container ACL over 64 KiB", "blob", "PUT", dev + "/cont?restype=container&comp=acl", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Queue ACL over 64 KiB", "queue", "PUT", dev + "/queue1?comp=acl", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Share ACL over 64 KiB", "file", "PUT", dev + "/share?restype=share&comp=acl", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Set Blob Tags over 64 KiB", "blob", "PUT", dev + "/cont/b?comp=tags", nil, 64<<10 + 1, 413, "RequestBodyTooLarge"},
		{"Create Permission over 65 KiB", "file", "PUT", dev + "/share?restype=share&comp=filepermission", hdr("Content-Type", "application/json"), 65<<10 + 1, 413, "RequestBodyTooLarge"},
	}
	for _, tc := range declared {
		h := tc.hdr.Clone()
		if h == nil {
			h = http.Header{}
		}
		h.Set("Content-Length", fmt.Sprint(tc.length))
		var r reply
		within(t, 5*time.Second, tc.name, func() {
			r = s.sendHalf(tc.svc, s.request(tc.svc, tc.method, tc.target, h, nil, app.DevAccount), false, true)
		})
		want(t, tc.name, r, tc.status, tc.code)
	}

	// Small XML bodies over their 64 KiB caps, sent whole.
	big := []byte("<?xml version=\"1.0\" encoding=\"utf-8\"?><X>" + strings.Repeat("x", 64<<10) + "</X>")
	for _, tc := range []struct{ name, svc, target string }{
		{"Set Blob Service Properties", "blob", dev + "?restype=service&comp=properties"},
		{"Set Queue Service Properties", "queue", dev + "?restype=service&comp=properties"},
		{"Set Container ACL", "blob", dev + "/cont?restype=container&comp=acl"},
		{"Set Queue ACL", "queue", dev + "/queue1?comp=acl"},
		{"Set Blob Tags", "blob", dev + "/cont/b?comp=tags"},
	} {
		want(t, tc.name+" over 64 KiB", s.do(tc.svc, "PUT", tc.target, nil, big, app.DevAccount), 413, "RequestBodyTooLarge")
	}

	// Oversized headers: net/http's 1 MiB bound answers 431 before any
	// handler runs.
	want(t, "1.5 MiB header", s.do("blob", "GET", dev+"/cont/b", hdr("X-Big", strings.Repeat("a", 1536<<10)), nil, ""), 431, "")
	want(t, "20000 headers", s.send("blob", []byte("GET "+dev+"/cont/b HTTP/1.1\r\nHost: x\r\n"+strings.Repeat("X-H: 0123456789012345678901234567890123456789012345678901234567890123\r\n", 20000)+"\r\n"), false), 431, "")

	// Metadata over 8 KiB (names and values together).
	want(t, "9 KiB of metadata", s.do("blob", "PUT", dev+"/cont/m", hdr("X-Ms-Blob-Type", "BlockBlob", "X-Ms-Meta-Big", strings.Repeat("v", 9<<10)), []byte("x"), app.DevAccount), 400, "MetadataTooLarge")
	many := hdr("X-Ms-Blob-Type", "BlockBlob")
	for i := 0; i < 1000; i++ {
		many.Set(fmt.Sprintf("X-Ms-Meta-K%04d", i), "0123456789")
	}
	want(t, "1000 metadata pairs", s.do("blob", "PUT", dev+"/cont/m", many, []byte("x"), app.DevAccount), 400, "MetadataTooLarge")
	want(t, "container metadata over 8 KiB", s.do("blob", "PUT", dev+"/big?restype=container", hdr("X-Ms-Meta-Big", strings.Repeat("v", 9<<10)), nil, app.DevAccount), 400, "MetadataTooLarge")
	want(t, "queue metadata over 8 KiB", s.do("queue", "PUT", dev+"/queue2", hdr("X-Ms-Meta-Big", strings.Repeat("v", 9<<10)), nil, app.DevAccount), 400, "MetadataTooLarge")

	// Counts: a block list of 50,001 blocks (Azure's limit is 50,000
	// committed blocks).
	var bl strings.Builder
	bl.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	for i := 0; i <= 50000; i++ {
		bl.WriteString("<Latest>QUFBQQ==</Latest>")
	}
	bl.WriteString("</BlockList>")
	var r reply
	within(t, 20*time.Second, "block list of 50,001", func() {
		r = s.do("blob", "PUT", dev+"/cont/many?comp=blocklist", nil, []byte(bl.String()), app.DevAccount)
	})
	want(t, "block list of 50,001 blocks", r, 400, "BlockListTooLong")
	// A queue message over 64 KiB of text.
	want(t, "queue message over 64 KiB", s.do("queue", "POST", dev+"/queue1/messages", nil, []byte("<QueueMessage><MessageText>"+strings.Repeat("m", 65<<10)+"</MessageText></QueueMessage>"), app.DevAccount), 413, "RequestBodyTooLarge")
	// A table entity with a property over 64 KiB, and one of 253 custom
	// properties.
	want(t, "entity property over 64 KiB", s.do("table", "POST", dev+"/table1", hdr("Content-Type", "application/json"), []byte(`{"PartitionKey":"p","RowKey":"r","Big":"`+strings.Repeat("x", 33<<10)+`"}`), app.DevAccount), 400, "PropertyValueTooLarge")
	var props strings.Builder
	props.WriteString(`{"PartitionKey":"p","RowKey":"r2"`)
	for i := 0; i < 253; i++ {
		fmt.Fprintf(&props, `,"P%d":1`, i)
	}
	props.WriteString("}")
	want(t, "entity of 253 custom properties", s.do("table", "POST", dev+"/table1", hdr("Content-Type", "application/json"), []byte(props.String()), app.DevAccount), 400, "TooManyProperties")
	s.alive()
}
