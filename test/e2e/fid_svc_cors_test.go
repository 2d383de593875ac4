package e2e

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// fidRaw sends an unauthenticated request and returns the response with
// its body read.
func fidRaw(t *testing.T, method, url string, hdr map[string]string) svResp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	must(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	return svResp{status: resp.StatusCode, header: resp.Header, body: b}
}

func fidHasVary(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		if v == "Origin" {
			return true
		}
	}
	return false
}

// CORS on all four services, rules set through each service's SDK (
// Cross-Origin Resource Sharing (CORS) support for Azure Storage): a
// preflight without Origin or Access-Control-Request-Method is 400
// whatever the rules; an allowed origin may name subdomains with a
// wildcard (http://*.contoso.com); GET and HEAD responses of a service
// with rules carry Vary: Origin, with or without an Origin header,
// unless a rule allowing any origin matched.
func TestFidSvcCORS(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	ctx := context.Background()
	const origins, methods, allowed, exposed = "http://*.contoso.com,https://app.example", "GET,PUT,HEAD", "x-ms-*,content-type", "x-ms-meta-*"

	// Before any rule: a preflight with the headers is 403, without
	// them 400; a GET carries no Vary.
	svWantRaw(t, fidRaw(t, http.MethodOptions, a.QueueURL+"/q", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}), 403, "CorsPreflightFailure")
	svWantRaw(t, fidRaw(t, http.MethodOptions, a.QueueURL+"/q", map[string]string{"Origin": "https://app.example"}), 400, "InvalidHeaderValue")
	if r := fidRaw(t, http.MethodGet, a.QueueURL+"?comp=list", nil); fidHasVary(r.header) {
		t.Fatalf("Vary without CORS rules: %v", r.header)
	}

	bc := client(t, a.BlobURL, app.DevKey)
	_, err := bc.ServiceClient().SetProperties(ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{{
		AllowedOrigins: to.Ptr(origins), AllowedMethods: to.Ptr(methods), AllowedHeaders: to.Ptr(allowed), ExposedHeaders: to.Ptr(exposed), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}})
	must(t, err)
	qc := quClient(t, a.QueueURL, app.DevKey)
	_, err = qc.SetProperties(ctx, &azqueue.SetPropertiesOptions{CORS: []*azqueue.CORSRule{{
		AllowedOrigins: to.Ptr(origins), AllowedMethods: to.Ptr(methods), AllowedHeaders: to.Ptr(allowed), ExposedHeaders: to.Ptr(exposed), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}})
	must(t, err)
	tc := tbService(t, a.TableURL, app.DevKey)
	_, err = tc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
		AllowedOrigins: to.Ptr(origins), AllowedMethods: to.Ptr(methods), AllowedHeaders: to.Ptr(allowed), ExposedHeaders: to.Ptr(exposed), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}}, nil)
	must(t, err)
	fc := fileClient(t, a.FileURL, app.DevKey)
	_, err = fc.SetProperties(ctx, &fileservice.SetPropertiesOptions{CORS: []*fileservice.CORSRule{{
		AllowedOrigins: to.Ptr(origins), AllowedMethods: to.Ptr(methods), AllowedHeaders: to.Ptr(allowed), ExposedHeaders: to.Ptr(exposed), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}})
	must(t, err)

	// An SDK call (Get Service Properties, a GET without Origin) to a
	// service with rules carries Vary: Origin.
	sdkGets := map[string]func(context.Context) error{
		"blob":  func(c context.Context) error { _, err := bc.ServiceClient().GetProperties(c, nil); return err },
		"queue": func(c context.Context) error { _, err := qc.GetServiceProperties(c, nil); return err },
		"table": func(c context.Context) error { _, err := tc.GetProperties(c, nil); return err },
		"file":  func(c context.Context) error { _, err := fc.GetProperties(c, nil); return err },
	}
	for name, base := range map[string]string{"blob": a.BlobURL, "queue": a.QueueURL, "table": a.TableURL, "file": a.FileURL} {
		var resp *http.Response
		if err := sdkGets[name](runtime.WithCaptureResponse(ctx, &resp)); err != nil {
			t.Fatalf("%s: get properties: %v", name, err)
		}
		if !fidHasVary(resp.Header) || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("%s: SDK GET without Origin: %v", name, resp.Header)
		}

		// Preflights: missing headers are 400 whatever the rules.
		for _, hdr := range []map[string]string{
			{"Origin": "http://www.contoso.com"},
			{"Access-Control-Request-Method": "PUT"},
			{},
		} {
			svWantRaw(t, fidRaw(t, http.MethodOptions, base+"/x", hdr), 400, "InvalidHeaderValue")
		}
		// A subdomain of the wildcard origin, any depth.
		for _, o := range []string{"http://www.contoso.com", "http://a.b.contoso.com", "HTTP://WWW.CONTOSO.COM"} {
			r := fidRaw(t, http.MethodOptions, base+"/x", map[string]string{"Origin": o, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-ms-version,content-type"})
			svWantRaw(t, r, 200, "")
			if r.header.Get("Access-Control-Allow-Origin") != o || r.header.Get("Access-Control-Allow-Methods") != "PUT" ||
				r.header.Get("Access-Control-Max-Age") != "60" || r.header.Get("Access-Control-Allow-Credentials") != "true" {
				t.Fatalf("%s: preflight from %s: %v", name, o, r.header)
			}
		}
		// Not under the wildcard: the bare domain, another scheme,
		// another port, a look-alike host.
		for _, o := range []string{"http://contoso.com", "https://www.contoso.com", "http://www.contoso.com:8080", "http://www.contoso.com.evil.example", "http://evilcontoso.com"} {
			svWantRaw(t, fidRaw(t, http.MethodOptions, base+"/x", map[string]string{"Origin": o, "Access-Control-Request-Method": "GET"}), 403, "CorsPreflightFailure")
		}

		// Actual requests (anonymous, so answered with an error, which
		// carries the CORS headers too).
		r := fidRaw(t, http.MethodGet, base+"?comp=list", map[string]string{"Origin": "http://shop.contoso.com"})
		if r.header.Get("Access-Control-Allow-Origin") != "http://shop.contoso.com" || r.header.Get("Access-Control-Expose-Headers") != exposed || !fidHasVary(r.header) {
			t.Fatalf("%s: GET from an allowed origin: %v", name, r.header)
		}
		r = fidRaw(t, http.MethodGet, base+"?comp=list", map[string]string{"Origin": "https://evil.example"})
		if r.header.Get("Access-Control-Allow-Origin") != "" || !fidHasVary(r.header) {
			t.Fatalf("%s: GET from another origin: %v", name, r.header)
		}
		if r = fidRaw(t, http.MethodHead, base+"?comp=list", nil); !fidHasVary(r.header) {
			t.Fatalf("%s: HEAD without Origin: %v", name, r.header)
		}
		// Other methods: CORS headers for an allowed origin, no Vary.
		r = fidRaw(t, http.MethodPut, base+"/x", map[string]string{"Origin": "https://app.example"})
		if r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || fidHasVary(r.header) {
			t.Fatalf("%s: PUT from an allowed origin: %v", name, r.header)
		}
	}

	// A rule allowing any origin answers "*" and varies on nothing.
	_, err = bc.ServiceClient().SetProperties(ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{{
		AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(5)),
	}}})
	must(t, err)
	r := fidRaw(t, http.MethodGet, a.BlobURL+"?comp=list", map[string]string{"Origin": "https://anyone.example"})
	if r.header.Get("Access-Control-Allow-Origin") != "*" || fidHasVary(r.header) {
		t.Fatalf("GET matched by *: %v", r.header)
	}
	// Without Origin no rule matched: Vary: Origin.
	if r = fidRaw(t, http.MethodGet, a.BlobURL+"?comp=list", nil); !fidHasVary(r.header) {
		t.Fatalf("GET without Origin, rule *: %v", r.header)
	}
}
