package e2e

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// svResp is a response read in full by svSigned / svAnon.
type svResp struct {
	status int
	header http.Header
	body   []byte
}

type svPolicy func(*policy.Request) (*http.Response, error)

func (f svPolicy) Do(r *policy.Request) (*http.Response, error) { return f(r) }

// svSetHeader replaces every spelling of name in h by one value.
func svSetHeader(h http.Header, name, value string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	if strings.HasPrefix(strings.ToLower(name), "x-ms-") {
		h[strings.ToLower(name)] = []string{value}
	} else {
		h.Set(name, value)
	}
}

// svSigned sends an arbitrary request to the account URL + rel, signed
// with the dev key by azblob's own Shared Key policy: a per-call policy
// (which runs before the SDK signs) replaces the request an ordinary SDK
// call built, and a per-retry policy (which runs after signing) records
// the response. The SDK call's own result is ignored.
func (e *env) svSigned(method, rel string, hdr map[string]string, body []byte) svResp {
	e.t.Helper()
	return e.svSDKDo(app.DevKey, method, rel, hdr, body)
}

func (e *env) svSDKDo(key, method, rel string, hdr map[string]string, body []byte) svResp {
	e.t.Helper()
	u, err := url.Parse(e.app.BlobURL + rel)
	must(e.t, err)
	var got *svResp
	rewrite := svPolicy(func(req *policy.Request) (*http.Response, error) {
		raw := req.Raw()
		raw.Method = method
		raw.URL = u
		raw.Host = u.Host
		ct := hdr["Content-Type"]
		if body != nil {
			if err := req.SetBody(streaming.NopCloser(bytes.NewReader(body)), ct); err != nil {
				return nil, err
			}
		} else if err := req.SetBody(nil, ""); err != nil {
			return nil, err
		}
		for k, v := range hdr {
			if k != "Content-Type" {
				svSetHeader(raw.Header, k, v)
			}
		}
		return req.Next()
	})
	record := svPolicy(func(req *policy.Request) (*http.Response, error) {
		resp, err := req.Next()
		if err != nil {
			return resp, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		got = &svResp{status: resp.StatusCode, header: resp.Header.Clone(), body: b}
		return resp, nil
	})
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, key)
	must(e.t, err)
	opts := clientOptions()
	opts.PerCallPolicies = []policy.Policy{rewrite}
	opts.PerRetryPolicies = []policy.Policy{record}
	c, err := service.NewClientWithSharedKeyCredential(e.app.BlobURL, cred, (*service.ClientOptions)(opts))
	must(e.t, err)
	_, _ = c.GetProperties(e.ctx, nil)
	if got == nil {
		e.t.Fatalf("%s %s: no response", method, rel)
	}
	return *got
}

// svAnon sends an unsigned request with plain net/http.
func (e *env) svAnon(method, rel string, hdr map[string]string) svResp {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.ctx, method, e.app.BlobURL+rel, nil)
	must(e.t, err)
	for k, v := range hdr {
		svSetHeader(req.Header, k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return svResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// svWantRaw asserts a raw response's status and x-ms-error-code (code ""
// means none), and that the common headers are there.
func svWantRaw(t *testing.T, r svResp, status int, code string) {
	t.Helper()
	if r.status != status || r.header.Get("x-ms-error-code") != code {
		t.Fatalf("want %d %q, got %d %q: %s", status, code, r.status, r.header.Get("x-ms-error-code"), r.body)
	}
	svWantCommon(t, r.header)
}

// svWantCommon checks the headers every response carries.
func svWantCommon(t *testing.T, h http.Header) {
	t.Helper()
	if id := h.Get("x-ms-request-id"); len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("x-ms-request-id = %q", id)
	}
	if h.Get("x-ms-version") == "" {
		t.Fatalf("no x-ms-version")
	}
	d, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		t.Fatalf("Date %q: %v", h.Get("Date"), err)
	}
	if time.Since(d).Abs() > time.Hour {
		t.Fatalf("Date %v is far from now", d)
	}
}

// svErrorBody is the XML error document.
type svErrorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

func svWantErrorBody(t *testing.T, r svResp, code string) {
	t.Helper()
	var eb svErrorBody
	if err := xml.Unmarshal(r.body, &eb); err != nil {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	if eb.Code != code || !strings.Contains(eb.Message, "RequestId:"+r.header.Get("x-ms-request-id")) {
		t.Fatalf("error body %q", r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("error Content-Type %q", ct)
	}
}

func svClient(e *env) *service.Client { return e.c.ServiceClient() }

func TestServicePropertiesRoundTrip(t *testing.T) {
	e := start(t)
	s := svClient(e)

	// Defaults: nothing configured.
	p, err := s.GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.CORS) != 0 || p.DeleteRetentionPolicy == nil || *p.DeleteRetentionPolicy.Enabled || p.StaticWebsite == nil || *p.StaticWebsite.Enabled {
		t.Fatalf("defaults: %+v", p.StorageServiceProperties)
	}
	svWantCommon(t, svHeaders(t, e, func(ctx context.Context) error { _, err := s.GetProperties(ctx, nil); return err }))

	rules := []*service.CORSRule{
		{AllowedOrigins: to.Ptr("http://a.example,http://b.example"), AllowedMethods: to.Ptr("GET,PUT"), AllowedHeaders: to.Ptr("x-ms-meta-*"), ExposedHeaders: to.Ptr("x-ms-request-id"), MaxAgeInSeconds: to.Ptr(int32(600))},
		{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("HEAD")},
	}
	var setResp *http.Response
	_, err = s.SetProperties(runtime.WithCaptureResponse(e.ctx, &setResp), &service.SetPropertiesOptions{
		CORS:                  rules,
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7)), AllowPermanentDelete: to.Ptr(false)},
		DefaultServiceVersion: to.Ptr("2020-10-02"),
		HourMetrics: &service.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
			RetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(5))}},
		Logging: &service.Logging{Read: to.Ptr(true), Write: to.Ptr(true), Delete: to.Ptr(false),
			RetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(false)}},
		StaticWebsite: &service.StaticWebsite{Enabled: to.Ptr(true), IndexDocument: to.Ptr("index.html"),
			ErrorDocument404Path: to.Ptr("err/404.html"), DefaultIndexDocumentPath: to.Ptr("dir/index.html")},
	})
	must(t, err)
	if setResp.StatusCode != http.StatusAccepted {
		t.Fatalf("Set Blob Service Properties: %d, want 202", setResp.StatusCode)
	}
	svWantCommon(t, setResp.Header)

	p, err = s.GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.CORS) != 2 {
		t.Fatalf("CORS: %d rules", len(p.CORS))
	}
	r0, r1 := p.CORS[0], p.CORS[1]
	if *r0.AllowedOrigins != "http://a.example,http://b.example" || *r0.AllowedMethods != "GET,PUT" || *r0.AllowedHeaders != "x-ms-meta-*" ||
		*r0.ExposedHeaders != "x-ms-request-id" || *r0.MaxAgeInSeconds != 600 {
		t.Fatalf("rule 0: %+v", *r0)
	}
	if *r1.AllowedOrigins != "*" || *r1.AllowedMethods != "HEAD" || *r1.AllowedHeaders != "" || *r1.ExposedHeaders != "" || *r1.MaxAgeInSeconds != 0 {
		t.Fatalf("rule 1: %+v", *r1)
	}
	if d := p.DeleteRetentionPolicy; !*d.Enabled || d.Days == nil || *d.Days != 7 || d.AllowPermanentDelete == nil || *d.AllowPermanentDelete {
		t.Fatalf("delete retention: %+v", *d)
	}
	if p.DefaultServiceVersion == nil || *p.DefaultServiceVersion != "2020-10-02" {
		t.Fatalf("default service version %v", p.DefaultServiceVersion)
	}
	if m := p.HourMetrics; m == nil || !*m.Enabled || m.IncludeAPIs == nil || !*m.IncludeAPIs || *m.Version != "1.0" || !*m.RetentionPolicy.Enabled || *m.RetentionPolicy.Days != 5 {
		t.Fatalf("hour metrics: %+v", p.HourMetrics)
	}
	if l := p.Logging; l == nil || !*l.Read || !*l.Write || *l.Delete || *l.Version != "1.0" || *l.RetentionPolicy.Enabled {
		t.Fatalf("logging: %+v", p.Logging)
	}
	if m := p.MinuteMetrics; m == nil || *m.Enabled {
		t.Fatalf("minute metrics changed: %+v", p.MinuteMetrics)
	}
	if w := p.StaticWebsite; !*w.Enabled || *w.IndexDocument != "index.html" || *w.ErrorDocument404Path != "err/404.html" || *w.DefaultIndexDocumentPath != "dir/index.html" {
		t.Fatalf("static website: %+v", *w)
	}

	// Elements left out keep their value; an empty <Cors/> clears the rules.
	_, err = s.SetProperties(e.ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{}})
	must(t, err)
	p, err = s.GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.CORS) != 0 || !*p.DeleteRetentionPolicy.Enabled || !*p.StaticWebsite.Enabled {
		t.Fatalf("after clearing CORS: %+v", p.StorageServiceProperties)
	}
	_, err = s.SetProperties(e.ctx, &service.SetPropertiesOptions{
		DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(false)},
		StaticWebsite:         &service.StaticWebsite{Enabled: to.Ptr(false)},
	})
	must(t, err)
	p, err = s.GetProperties(e.ctx, nil)
	must(t, err)
	if *p.DeleteRetentionPolicy.Enabled || *p.StaticWebsite.Enabled {
		t.Fatalf("after disabling: %+v %+v", *p.DeleteRetentionPolicy, *p.StaticWebsite)
	}

	// Invalid values.
	_, err = s.SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(0))}})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	six := make([]*service.CORSRule, 6)
	for i := range six {
		six[i] = &service.CORSRule{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET")}
	}
	_, err = s.SetProperties(e.ctx, &service.SetPropertiesOptions{CORS: six})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	p, err = s.GetProperties(e.ctx, nil)
	must(t, err)
	if len(p.CORS) != 0 || *p.DeleteRetentionPolicy.Enabled {
		t.Fatalf("a rejected Set changed the properties: %+v", p.StorageServiceProperties)
	}
}

// svHeaders runs an SDK call and returns the headers of its response.
func svHeaders(t *testing.T, e *env, call func(ctx context.Context) error) http.Header {
	t.Helper()
	var resp *http.Response
	if err := call(runtime.WithCaptureResponse(e.ctx, &resp)); err != nil {
		t.Fatal(err)
	}
	return resp.Header
}

func TestServicePropertiesMalformedXML(t *testing.T) {
	e := start(t)
	const path = "/?restype=service&comp=properties"
	ct := map[string]string{"Content-Type": "application/xml"}
	for _, body := range []string{
		"<StorageServiceProperties><Cors>", // truncated
		"not xml at all",                   // garbage
		"<Other><Cors></Cors></Other>",     // wrong root
		"<StorageServiceProperties><Cors></Logging></StorageServiceProperties>", // mismatched tags
	} {
		r := e.svSigned(http.MethodPut, path, ct, []byte(body))
		svWantRaw(t, r, 400, string(bloberror.InvalidXMLDocument))
		svWantErrorBody(t, r, string(bloberror.InvalidXMLDocument))
	}
	// A well-formed document through the same helper succeeds, so the 400s
	// above are not signing failures.
	r := e.svSigned(http.MethodPut, path, ct, []byte(`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><StaticWebsite><Enabled>true</Enabled><IndexDocument>i.htm</IndexDocument></StaticWebsite></StorageServiceProperties>`))
	svWantRaw(t, r, 202, "")
	p, err := svClient(e).GetProperties(e.ctx, nil)
	must(t, err)
	if !*p.StaticWebsite.Enabled || *p.StaticWebsite.IndexDocument != "i.htm" {
		t.Fatalf("static website: %+v", *p.StaticWebsite)
	}
}

func TestGetAccountInfo(t *testing.T) {
	e := start(t)
	var raw *http.Response
	info, err := svClient(e).GetAccountInfo(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("status %d", raw.StatusCode)
	}
	if info.SKUName == nil || *info.SKUName != service.SKUNameStandardRAGRS || info.AccountKind == nil || *info.AccountKind != service.AccountKindStorageV2 {
		t.Fatalf("sku %v kind %v", info.SKUName, info.AccountKind)
	}
	if info.IsHierarchicalNamespaceEnabled == nil || *info.IsHierarchicalNamespaceEnabled {
		t.Fatalf("hns %v", info.IsHierarchicalNamespaceEnabled)
	}
	svWantCommon(t, raw.Header)
	// Also valid on a container and on a blob.
	e.container("acctinfo")
	ci, err := e.c.ServiceClient().NewContainerClient("acctinfo").GetAccountInfo(e.ctx, nil)
	must(t, err)
	if *ci.SKUName != service.SKUNameStandardRAGRS || *ci.AccountKind != service.AccountKindStorageV2 {
		t.Fatalf("container-level account info: %v %v", *ci.SKUName, *ci.AccountKind)
	}
	_, err = e.c.UploadBuffer(e.ctx, "acctinfo", "b", []byte("x"), nil)
	must(t, err)
	bi, err := e.c.ServiceClient().NewContainerClient("acctinfo").NewBlobClient("b").GetAccountInfo(e.ctx, nil)
	must(t, err)
	if *bi.SKUName != service.SKUNameStandardRAGRS || *bi.AccountKind != service.AccountKindStorageV2 {
		t.Fatalf("blob-level account info: %v %v", *bi.SKUName, *bi.AccountKind)
	}
}

func TestGetServiceStats(t *testing.T) {
	e := start(t)
	var raw *http.Response
	// Served on the secondary endpoint only (Get Blob Service Stats).
	_, err := svClient(e).GetStatistics(e.ctx, nil)
	wantCode(t, err, 400, bloberror.InvalidQueryParameterValue)
	st, err := client(t, e.app.BlobURL+"-secondary", app.DevKey).ServiceClient().GetStatistics(runtime.WithCaptureResponse(e.ctx, &raw), nil)
	must(t, err)
	if raw.StatusCode != 200 {
		t.Fatalf("status %d", raw.StatusCode)
	}
	if st.GeoReplication == nil || st.GeoReplication.Status == nil || *st.GeoReplication.Status != service.BlobGeoReplicationStatusLive {
		t.Fatalf("geo replication: %+v", st.GeoReplication)
	}
	if st.GeoReplication.LastSyncTime == nil || st.GeoReplication.LastSyncTime.Sub(e.clock.Now()).Abs() > 2*time.Second {
		t.Fatalf("last sync time %v, server now %v", st.GeoReplication.LastSyncTime, e.clock.Now())
	}
	svWantCommon(t, raw.Header)
}

func TestServiceLevelUnknownOperation(t *testing.T) {
	e := start(t)
	r := e.svSigned(http.MethodGet, "/?restype=service&comp=nonsense", nil, nil)
	svWantRaw(t, r, 400, string(bloberror.InvalidQueryParameterValue))
	svWantErrorBody(t, r, string(bloberror.InvalidQueryParameterValue))
}

// The SDK's own error surface agrees with the raw one.
func TestServiceErrorThroughSDK(t *testing.T) {
	e := start(t)
	_, err := svClient(e).SetProperties(e.ctx, &service.SetPropertiesOptions{DeleteRetentionPolicy: &service.RetentionPolicy{Enabled: to.Ptr(true)}})
	wantCode(t, err, 400, bloberror.InvalidXMLDocument)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse.Header.Get("x-ms-error-code") == "" {
		t.Fatalf("no x-ms-error-code on %v", err)
	}
	svWantCommon(t, re.RawResponse.Header)
}
