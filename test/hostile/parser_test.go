package hostile

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

const laughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
`

// TestParserBombs: XML entity expansion (billion laughs), external
// entities (XXE), deep nesting of XML, JSON and OData filters, and huge
// table batches are refused with Azure's codes, quickly, without reading
// a file of the host; the server stays responsive.
func TestParserBombs(t *testing.T) {
	s := start(t, nil)
	dev := "/" + app.DevAccount
	json := http.Header{"Content-Type": {"application/json"}}
	s.must(s.do("table", "POST", dev+"/Tables", json, []byte(`{"TableName":"table1"}`), app.DevAccount), 201)
	s.must(s.do("queue", "PUT", dev+"/queue1", nil, nil, app.DevAccount), 201)

	xxe := `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>`
	// 9000 levels fit the 64 KiB bodies; Put Block List (8 MiB) gets
	// 200000 below.
	deep := strings.Repeat("<a>", 9000) + strings.Repeat("</a>", 9000)
	// deepStatus is the answer to a well-formed document with a deep
	// unknown element: the operations that ignore elements they do not
	// know (as Azure does) succeed; Put Block List refuses any.
	xmlTargets := []struct {
		name, svc, target, root string
		deepStatus              int
	}{
		{"Put Block List", "blob", dev + "/cont/b?comp=blocklist", "BlockList", 400},
		{"Set Container ACL", "blob", dev + "/cont?restype=container&comp=acl", "SignedIdentifiers", 200},
		{"Set Blob Service Properties", "blob", dev + "?restype=service&comp=properties", "StorageServiceProperties", 202},
		{"Set Blob Tags", "blob", dev + "/cont/b?comp=tags", "Tags", 204},
		{"Set Queue ACL", "queue", dev + "/queue1?comp=acl", "SignedIdentifiers", 204},
	}
	for _, x := range xmlTargets {
		for _, b := range []struct {
			name, body string
			status     int
		}{
			{"billion laughs", laughs + "<" + x.root + ">&lol9;</" + x.root + ">", 400},
			{"external entity", xxe + "<" + x.root + ">&x;</" + x.root + ">", 400},
			{"9000 nested elements", "<" + x.root + ">" + deep + "</" + x.root + ">", x.deepStatus},
			{"unclosed root", "<" + x.root + ">", 400},
		} {
			var r reply
			within(t, 5*time.Second, x.name+" "+b.name, func() {
				r = s.do(x.svc, "PUT", x.target, nil, []byte(b.body), app.DevAccount)
			})
			if strings.Contains(r.body, "root:") {
				t.Fatalf("%s %s: the answer holds a host file: %v", x.name, b.name, r)
			}
			code := "InvalidXmlDocument"
			if b.status != 400 {
				code = ""
			}
			want(t, x.name+" "+b.name, r, b.status, code)
		}
	}
	want(t, "Put Block List 200000 nested elements", s.do("blob", "PUT", dev+"/cont/b?comp=blocklist", nil,
		[]byte("<BlockList>"+strings.Repeat("<a>", 200000)+strings.Repeat("</a>", 200000)+"</BlockList>"), app.DevAccount), 400, "InvalidXmlDocument")
	// Put Message: the message text is not an entity sink either.
	want(t, "Put Message billion laughs", s.do("queue", "POST", dev+"/queue1/messages", nil, []byte(laughs+"<QueueMessage><MessageText>&lol9;</MessageText></QueueMessage>"), app.DevAccount), 400, "InvalidXmlDocument")

	// JSON: deep nesting and huge documents for entities and batches.
	deepJSON := `{"PartitionKey":"p","RowKey":"r","A":` + strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000) + "}"
	want(t, "entity nested 100000 deep", s.do("table", "POST", dev+"/table1", json, []byte(deepJSON), app.DevAccount), 400, "InvalidInput")
	arr := `{"PartitionKey":"p","RowKey":"r","A":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}"
	want(t, "entity of arrays nested 100000 deep", s.do("table", "POST", dev+"/table1", json, []byte(arr), app.DevAccount), 400, "InvalidInput")
	want(t, "entity not JSON", s.do("table", "POST", dev+"/table1", json, []byte(`{"PartitionKey":`), app.DevAccount), 400, "InvalidInput")

	// A table batch of 101 operations (the limit is 100) and a batch
	// body over 4 MiB.
	var batch strings.Builder
	batch.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
	for i := 0; i < 101; i++ {
		batch.WriteString("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		batch.WriteString("POST http://" + s.addr["table"] + dev + "/table1 HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=nometadata\r\n\r\n")
		batch.WriteString(`{"PartitionKey":"p","RowKey":"r` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `"}` + "\r\n")
	}
	batch.WriteString("--changeset_c--\r\n--batch_b--\r\n")
	bh := http.Header{"Content-Type": {"multipart/mixed; boundary=batch_b"}}
	r := s.do("table", "POST", dev+"/$batch", bh, []byte(batch.String()), app.DevAccount)
	if r.status != 202 || !strings.Contains(r.body, "InvalidInput") && !strings.Contains(r.body, "400") {
		t.Errorf("batch of 101 operations: want 202 with a failed changeset, got %v", r)
	}
	want(t, "batch body over 4 MiB", s.do("table", "POST", dev+"/$batch", bh, []byte("--batch_b\r\n"+strings.Repeat("x", 4<<20)), app.DevAccount), 413, "RequestBodyTooLarge")

	// OData filters: nesting deeper than the parser's bound, more
	// comparisons than Azure's 15, and a long chain of nots.
	for _, f := range []struct{ name, filter string }{
		{"200 nested parentheses", strings.Repeat("(", 200) + "PartitionKey eq 'p'" + strings.Repeat(")", 200)},
		{"16 comparisons", strings.TrimSuffix(strings.Repeat("PartitionKey eq 'p' or ", 16), " or ")},
		{"1000 nots", strings.Repeat("not ", 1000) + "(PartitionKey eq 'p')"},
		{"unbalanced", strings.Repeat("(", 50) + "PartitionKey eq 'p'"},
	} {
		var r reply
		within(t, 5*time.Second, "filter "+f.name, func() {
			r = s.do("table", "GET", dev+"/table1()?$filter="+url.QueryEscape(f.filter), nil, nil, app.DevAccount)
		})
		want(t, "filter "+f.name, r, 400, "InvalidInput")
	}
	s.alive()
}
