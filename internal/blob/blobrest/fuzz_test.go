package blobrest

import (
	"encoding/xml"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// FuzzServiceProperties: arbitrary bodies never panic the decoder, and a
// decoded document re-encodes and decodes to the same value.
func FuzzServiceProperties(f *testing.F) {
	f.Add([]byte(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`))
	f.Add([]byte(`<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p svcprops.Properties
		if xml.Unmarshal(body, &p) == nil {
			out, err := xml.Marshal(p)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			var q svcprops.Properties
			if err := xml.Unmarshal(out, &q); err != nil {
				t.Fatalf("decode of our own output %q: %v", out, err)
			}
		}
		var acl signedIdentifiers
		_ = xml.Unmarshal(body, &acl)
	})
}

// FuzzBatch: any batch body either parses into sub-requests that stay in
// the batch's scope and are Delete Blob or Set Blob Tier, all of one kind,
// at most 256, or is rejected; it never panics.
func FuzzBatch(f *testing.F) {
	const b = "batch_x"
	part := func(id, req string) string {
		return "--" + b + "\r\nContent-Type: application/http\r\nContent-ID: " + id + "\r\n\r\n" + req + "\r\n"
	}
	f.Add(part("0", "DELETE /acct/c/a HTTP/1.1\r\n\r\n") + part("1", "DELETE /c/b? HTTP/1.1\r\nx-ms-date: x\r\n\r\n") + "--" + b + "--\r\n")
	f.Add(part("0", "PUT /acct/c/a?comp=tier HTTP/1.1\r\nx-ms-access-tier: Cool\r\n\r\n") + "--" + b + "--\r\n")
	f.Add(part("0", "GET /acct/c/a HTTP/1.1\r\n\r\n") + "--" + b + "--")
	f.Add("--" + b + "--")
	// The JavaScript SDK's shape: headers end at the part's delimiter.
	f.Add("--" + b + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: 0\r\n\r\nDELETE /acct/c/a HTTP/1.1\r\nx-ms-date: x\r\n\r\n--" + b + "\r\nContent-Type: application/http\r\nContent-ID: 1\r\n\r\nDELETE /acct/c/b HTTP/1.1\r\n--" + b + "--\r\n")
	f.Add("--" + b + "\r\nContent-ID: 0\r\n\r\nPUT /c/a?comp=tier HTTP/1.1\nx-ms-access-tier: Hot\n\r\n--" + b + "--")
	s := &Service{}
	f.Fuzz(func(t *testing.T, body string) {
		for _, cont := range []string{"", "c"} {
			hr, _ := http.NewRequest(http.MethodPost, "http://h/acct", nil)
			r := &req{Request: &server.Request{Request: hr, Account: "acct"}, container: cont}
			subs, err := s.parseBatch(r, []byte(body), b)
			if err != nil {
				continue
			}
			if len(subs) == 0 || len(subs) > maxBatchSubRequests {
				t.Fatalf("%d sub-requests accepted", len(subs))
			}
			for _, sr := range subs {
				p := sr.req.URL.Path
				parts := strings.SplitN(strings.TrimPrefix(p, "/acct/"), "/", 2)
				if !strings.HasPrefix(p, "/acct/") || len(parts) != 2 || parts[0] == "" || parts[1] == "" || (cont != "" && parts[0] != cont) {
					t.Fatalf("sub-request outside the scope: %q", p)
				}
				if m := sr.req.Method; m != http.MethodDelete && m != http.MethodPut {
					t.Fatalf("sub-request method %s", m)
				}
			}
		}
	})
}

// FuzzBatchBoundary: any Content-Type either yields a non-empty boundary
// or is refused, and whenever mime.ParseMediaType finds a boundary, the
// same one.
func FuzzBatchBoundary(f *testing.F) {
	for _, ct := range []string{
		"multipart/mixed; boundary=batch_a81786c8-e301-4e42-a729-a32ca24ae252",
		"Multipart/Mixed; BOUNDARY = batch_1",
		`multipart/mixed; boundary="a;b=c"`,
		"multipart/mixed; boundary=a=b",
		`multipart/mixed; boundary="unterminated`,
		"multipart/mixed; boundary=",
		"multipart/mixed",
	} {
		f.Add(ct)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		got, ok := batchBoundary(ct)
		if ok && got == "" {
			t.Fatalf("%q: empty boundary accepted", ct)
		}
		if _, params, err := mime.ParseMediaType(ct); err == nil && params["boundary"] != "" && got != params["boundary"] {
			t.Fatalf("%q: boundary %q, mime.ParseMediaType says %q", ct, got, params["boundary"])
		}
	})
}

func TestBatchBoundary(t *testing.T) {
	for ct, want := range map[string]string{
		"multipart/mixed; boundary=batch_1":          "batch_1",
		"Multipart/Mixed;Boundary=batch_2":           "batch_2",
		"multipart/mixed; boundary = batch_3 ":       "batch_3",
		"multipart/mixed; boundary=a=b=":             "a=b=",
		`multipart/mixed; x=1; boundary="q;u=o\"te"`: `q;u=o"te`,
		`multipart/mixed; boundary="x y"; z=1`:       "x y",
		"multipart/mixed":                            "",
		"multipart/mixed; boundary=":                 "",
		`multipart/mixed; boundary=""`:               "",
		`multipart/mixed; boundary="open`:            "",
		"multipart/mixed; boundaryx=batch":           "",
	} {
		got, ok := batchBoundary(ct)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", ct, got, ok, want)
		}
	}
}

// FuzzSequenceConditions: any x-ms-if-sequence-number-* values parse
// without panicking, and the parsed conditions decide exactly as the
// headers read in order (le, lt, eq; the first malformed one is 400
// after the ones before it).
func FuzzSequenceConditions(f *testing.F) {
	f.Add("5", "", "", int64(5))
	f.Add("4", "x", "", int64(5))
	f.Add("", "6", "five", int64(5))
	f.Add("9223372036854775807", "-1", "0", int64(0))
	f.Fuzz(func(t *testing.T, le, lt, eq string, seq int64) {
		h := http.Header{}
		for name, v := range map[string]string{"x-ms-if-sequence-number-le": le, "x-ms-if-sequence-number-lt": lt, "x-ms-if-sequence-number-eq": eq} {
			if v != "" && !strings.ContainsAny(v, "\r\n") {
				h.Set(name, v)
			}
		}
		want := ""
		for _, c := range []struct {
			name string
			ok   func(v int64) bool
		}{
			{"x-ms-if-sequence-number-le", func(v int64) bool { return seq <= v }},
			{"x-ms-if-sequence-number-lt", func(v int64) bool { return seq < v }},
			{"x-ms-if-sequence-number-eq", func(v int64) bool { return seq == v }},
		} {
			s := h.Get(c.name)
			if s == "" {
				continue
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				want = "InvalidHeaderValue"
				break
			}
			if !c.ok(v) {
				want = "SequenceNumberConditionNotMet"
				break
			}
		}
		if got := ptErrCode(parseSequenceConds(h).Check(seq)); got != want {
			t.Fatalf("le=%q lt=%q eq=%q seq=%d: got %q, want %q", le, lt, eq, seq, got, want)
		}
	})
}
