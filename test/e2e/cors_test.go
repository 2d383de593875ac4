package e2e

import (
	"io"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
)

// A browser app: rules set through the SDK drive the preflight answer and
// the CORS headers of the real (here anonymous, public-container) request.
func TestCORSBrowserFlow(t *testing.T) {
	e := start(t)
	// Before any rule: preflights fail.
	r := e.svAnon(http.MethodOptions, "/pub/file.txt", map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
	svWantRaw(t, r, 403, "CorsPreflightFailure")

	_, err := e.c.ServiceClient().SetProperties(e.ctx, &service.SetPropertiesOptions{CORS: []*service.CORSRule{{
		AllowedOrigins:  to.Ptr("https://app.example"),
		AllowedMethods:  to.Ptr("GET,HEAD,PUT"),
		AllowedHeaders:  to.Ptr("x-ms-*,content-type"),
		ExposedHeaders:  to.Ptr("x-ms-meta-*,etag"),
		MaxAgeInSeconds: to.Ptr(int32(300)),
	}}})
	must(t, err)
	_, err = e.c.CreateContainer(e.ctx, "pub", &container.CreateOptions{Access: to.Ptr(container.PublicAccessTypeBlob)})
	must(t, err)
	_, err = e.c.UploadBuffer(e.ctx, "pub", "file.txt", []byte("hello browser"), nil)
	must(t, err)

	r = e.svAnon(http.MethodOptions, "/pub/file.txt", map[string]string{
		"Origin": "https://app.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-ms-blob-type,x-ms-version,content-type"})
	svWantRaw(t, r, 200, "")
	if r.header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.header.Get("Access-Control-Allow-Methods") != "PUT" ||
		r.header.Get("Access-Control-Max-Age") != "300" || r.header.Get("Access-Control-Allow-Headers") != "x-ms-blob-type,x-ms-version,content-type" {
		t.Fatalf("preflight headers: %v", r.header)
	}
	// Wrong origin, method or header: 403.
	for _, hdr := range []map[string]string{
		{"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
		{"Origin": "https://app.example", "Access-Control-Request-Method": "DELETE"},
		{"Origin": "https://app.example", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "authorization"},
	} {
		svWantRaw(t, e.svAnon(http.MethodOptions, "/pub/file.txt", hdr), 403, "CorsPreflightFailure")
	}
	// The real request carries the CORS headers.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, e.app.BlobURL+"/pub/file.txt", nil)
	must(t, err)
	req.Header.Set("Origin", "https://app.example")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello browser" || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		resp.Header.Get("Access-Control-Expose-Headers") != "x-ms-meta-*,etag" {
		t.Fatalf("actual request: %d %q %v", resp.StatusCode, body, resp.Header)
	}
}
