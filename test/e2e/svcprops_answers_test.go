package e2e

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

var updateSvcPropsAnswers = flag.Bool("update-svcprops-answers", false, "rewrite testdata/svcprops_answers.golden from the server's answers")

// svcPropsDocs are Set Service Properties bodies: valid documents with
// every service's own elements, documents that break a rule, and
// documents that are not one.
var svcPropsDocs = []struct{ name, body string }{
	{"common", `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` +
		`<Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>` +
		`<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
		`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>365</Days></RetentionPolicy></MinuteMetrics>` +
		`<Cors><CorsRule><AllowedOrigins>http://a.example</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><AllowedHeaders>x-ms-meta-*</AllowedHeaders><ExposedHeaders>x-ms-*</ExposedHeaders><MaxAgeInSeconds>60</MaxAgeInSeconds></CorsRule></Cors>` +
		`</StorageServiceProperties>`},
	{"blob-only", `<StorageServiceProperties><DefaultServiceVersion>2021-08-06</DefaultServiceVersion>` +
		`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days><AllowPermanentDelete>true</AllowPermanentDelete></DeleteRetentionPolicy>` +
		`<StaticWebsite><Enabled>true</Enabled><IndexDocument>index.html</IndexDocument><ErrorDocument404Path>404.html</ErrorDocument404Path><DefaultIndexDocumentPath>d/i.html</DefaultIndexDocumentPath></StaticWebsite>` +
		`</StorageServiceProperties>`},
	{"file-only", `<StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>9</Days></ShareDeleteRetentionPolicy>` +
		`<ProtocolSettings><SMB><Multichannel><Enabled>true</Enabled></Multichannel></SMB></ProtocolSettings></StorageServiceProperties>`},
	{"cors-only", `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`},
	{"unknown-element", `<StorageServiceProperties><Nonsense><A>1</A></Nonsense></StorageServiceProperties>`},
	{"empty-document", `<StorageServiceProperties/>`},
	{"malformed", `<StorageServiceProperties><Logging>`},
	{"not-xml", `{"Logging":{}}`},
	{"wrong-root", `<ServiceProperties><Cors/></ServiceProperties>`},
	{"empty-body", ``},
	{"six-cors-rules", `<StorageServiceProperties><Cors>` + strings.Repeat(`<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>`, 6) + `</Cors></StorageServiceProperties>`},
	{"retention-days-0", `<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>`},
	{"retention-days-366", `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></Logging></StorageServiceProperties>`},
	{"retention-no-days", `<StorageServiceProperties><MinuteMetrics><Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>true</Enabled></RetentionPolicy></MinuteMetrics></StorageServiceProperties>`},
	{"delete-retention-days-0", `<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled><Days>0</Days></DeleteRetentionPolicy></StorageServiceProperties>`},
	{"share-retention-no-days", `<StorageServiceProperties><ShareDeleteRetentionPolicy><Enabled>true</Enabled></ShareDeleteRetentionPolicy></StorageServiceProperties>`},
	{"bad-bool", `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>maybe</Delete></Logging></StorageServiceProperties>`},
	{"too-large", `<StorageServiceProperties>` + strings.Repeat(" ", 64<<10) + `</StorageServiceProperties>`},
}

// TestServicePropertiesAnswers records what every service (Blob, Queue,
// Table, File, and the dfs port, which hands the Blob API to Blob)
// answers to Get/Set Service Properties and Get Service Stats: defaults,
// each body of svcPropsDocs followed by a Get, the stats on the primary
// and the secondary endpoint, the secondary's properties, Table's
// answer to a JSON Accept, and the CORS answers the stored rules give. The status, every header but the per-request
// ones and the body (request id, error time and the server's clock
// masked) must equal testdata/svcprops_answers.golden, written from the
// server before the handlers became one generic set
// (-update-svcprops-answers rewrites it).
func TestServicePropertiesAnswers(t *testing.T) {
	a, clk := startApp4(t, 0, 0, 0, 0)
	services := []struct {
		name string
		url  string
		kind auth.Service
	}{
		{"blob", a.BlobURL, auth.Blob},
		{"queue", a.QueueURL, auth.Queue},
		{"table", a.TableURL, auth.Table},
		{"file", a.FileURL, auth.File},
		{"dfs", a.DFSURL, auth.Blob},
	}
	key, _ := base64.StdEncoding.DecodeString(app.DevKey)
	now := clk.Now().UTC().Format(http.TimeFormat)
	var out bytes.Buffer
	do := func(svc, base string, kind auth.Service, label, method, rel string, hdr map[string]string, body string) {
		t.Helper()
		var rd io.Reader
		if method == http.MethodPut {
			rd = strings.NewReader(body)
		}
		r, err := http.NewRequest(method, base+rel, rd)
		must(t, err)
		r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
		r.Header.Set("x-ms-version", "2025-01-05")
		sign := true
		for k, v := range hdr {
			if k == "unsigned" {
				sign = false
				continue
			}
			if k == "chunked" {
				// No declared length: the body limit, not the header,
				// refuses it.
				r.ContentLength, r.Body, r.GetBody = -1, io.NopCloser(rd), nil
				continue
			}
			r.Header.Set(k, v)
		}
		if method == http.MethodPut {
			r.Header.Set("Content-Type", "application/xml")
		}
		if r.ContentLength > 0 {
			r.Header.Set("Content-Length", fmt.Sprint(r.ContentLength))
		}
		if kind == auth.Table {
			r.Header.Set("Date", r.Header.Get("x-ms-date"))
		}
		if sign {
			sts := auth.StringToSign(r, kind, auth.SharedKey, app.DevAccount, auth.CultureOrder)
			r.Header.Set("Authorization", "SharedKey "+app.DevAccount+":"+auth.ComputeSignature(key, sts))
		}
		resp, err := http.DefaultClient.Do(r)
		must(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		must(t, err)
		fmt.Fprintf(&out, "### %s %s: %s %s\n%d\n", svc, label, method, rel, resp.StatusCode)
		var names []string
		for k := range resp.Header {
			switch k {
			case "Date", "X-Ms-Request-Id", "X-Ms-Client-Request-Id":
				continue
			}
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(resp.Header[k], ", "))
		}
		fmt.Fprintf(&out, "\n%s\n\n", maskAnswer(string(got), now))
	}
	for _, s := range services {
		sec := s.url + "-secondary"
		props := "/?restype=service&comp=properties"
		stats := "/?restype=service&comp=stats"
		do(s.name, s.url, s.kind, "defaults", http.MethodGet, props, nil, "")
		for _, d := range svcPropsDocs {
			do(s.name, s.url, s.kind, "set "+d.name, http.MethodPut, props, nil, d.body)
			do(s.name, s.url, s.kind, "after "+d.name, http.MethodGet, props, nil, "")
		}
		do(s.name, s.url, s.kind, "chunked too large", http.MethodPut, props, map[string]string{"chunked": ""}, svcPropsDocs[len(svcPropsDocs)-1].body)
		do(s.name, s.url, s.kind, "head", http.MethodHead, props, nil, "")
		do(s.name, s.url, s.kind, "post", http.MethodPost, props, nil, "")
		do(s.name, s.url, s.kind, "json accept", http.MethodGet, props, map[string]string{"Accept": "application/json;odata=nometadata"}, "")
		do(s.name, s.url, s.kind, "stats primary", http.MethodGet, stats, nil, "")
		do(s.name, sec, s.kind, "stats secondary", http.MethodGet, stats, nil, "")
		do(s.name, sec, s.kind, "secondary get", http.MethodGet, props, nil, "")
		// The rules set above (cors-only) answer a preflight and a
		// request from an allowed origin.
		do(s.name, s.url, s.kind, "preflight", http.MethodOptions, props, map[string]string{"unsigned": "", "Origin": "http://x.example", "Access-Control-Request-Method": "GET"}, "")
		do(s.name, s.url, s.kind, "get with origin", http.MethodGet, props, map[string]string{"Origin": "http://x.example"}, "")
		do(s.name, s.url, s.kind, "unauthenticated get", http.MethodGet, props, map[string]string{"unsigned": ""}, "")
		do(s.name, sec, s.kind, "secondary set", http.MethodPut, props, nil, svcPropsDocs[3].body)
	}
	golden := filepath.Join("testdata", "svcprops_answers.golden")
	if *updateSvcPropsAnswers {
		must(t, os.MkdirAll("testdata", 0o755))
		must(t, os.WriteFile(golden, out.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(want, out.Bytes()) {
		gotLines, wantLines := strings.Split(out.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gotLines) || i < len(wantLines); i++ {
			var g, w string
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Fatalf("answers differ from %s at line %d:\n got: %q\nwant: %q", golden, i+1, g, w)
			}
		}
	}
}

var (
	answerRequestID = regexp.MustCompile(`RequestId:[0-9a-f-]{36}`)
	answerTime      = regexp.MustCompile(`Time:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z`)
)

// maskAnswer replaces what differs from run to run in a body: an
// error's request id and time, and the server clock's time.
func maskAnswer(body, now string) string {
	body = answerRequestID.ReplaceAllString(body, "RequestId:<id>")
	body = answerTime.ReplaceAllString(body, "Time:<time>")
	return strings.ReplaceAll(body, now, "<now>")
}
