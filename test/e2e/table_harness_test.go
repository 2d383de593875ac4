package e2e

// Harness of the Table end-to-end tests: an in-process server with only
// the Table listener, aztables clients with retries off, and a raw
// SharedKeyLite client for what the SDK cannot send (Prefer on Create
// Table, X-HTTP-Method, hand-made batches, Accept variants).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

type tbEnv struct {
	t     testing.TB
	app   *app.App
	clock *clock.Fake
	svc   *aztables.ServiceClient
	ctx   context.Context
	hc    *http.Client
}

// tbStart runs a server with only the Table service on a temporary
// directory, with a fake clock set to the real time (the SDK signs with
// the real time).
func tbStart(t testing.TB) *tbEnv {
	t.Helper()
	a, clk := startApp(t, -1, -1, 0)
	return &tbEnv{t: t, app: a, clock: clk, svc: tbService(t, a.TableURL, app.DevKey), ctx: context.Background(), hc: &http.Client{Timeout: 60 * time.Second}}
}

func tbOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry:     policy.RetryOptions{MaxRetries: -1},
		Transport: &http.Client{Timeout: 60 * time.Second},
	}}
}

func tbService(t testing.TB, url, key string) *aztables.ServiceClient {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(app.DevAccount, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := aztables.NewServiceClientWithSharedKey(url, cred, tbOptions())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// table creates a table and returns its client.
func (e *tbEnv) table(name string) *aztables.Client {
	e.t.Helper()
	_, err := e.svc.CreateTable(e.ctx, name, nil)
	tbMust(e.t, err)
	return e.svc.NewClient(name)
}

func tbMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tbWant asserts err is an Azure response error with status and code
// (code "" matches any).
func tbWant(t testing.TB, err error, status int, code aztables.TableErrorCode) *azcore.ResponseError {
	t.Helper()
	if err == nil {
		t.Fatalf("want %d %s, got success", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || (code != "" && re.ErrorCode != string(code)) {
		t.Fatalf("want %d %s, got %d %s: %v", status, code, re.StatusCode, re.ErrorCode, err)
	}
	return re
}

// tbAdd inserts an entity given as a map.
func (e *tbEnv) tbAdd(c *aztables.Client, ent map[string]any) aztables.AddEntityResponse {
	e.t.Helper()
	resp, err := c.AddEntity(e.ctx, tbJSON(e.t, ent), nil)
	tbMust(e.t, err)
	return resp
}

func tbJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tbGet reads an entity as a generic map.
func (e *tbEnv) tbGet(c *aztables.Client, pk, rk string) (map[string]any, azcore.ETag) {
	e.t.Helper()
	resp, err := c.GetEntity(e.ctx, pk, rk, nil)
	tbMust(e.t, err)
	var m map[string]any
	tbMust(e.t, json.Unmarshal(resp.Value, &m))
	return m, resp.ETag
}

// tbList returns every entity the query matches (all pages) and the
// number of pages.
func (e *tbEnv) tbList(c *aztables.Client, o *aztables.ListEntitiesOptions) ([]map[string]any, int) {
	e.t.Helper()
	var out []map[string]any
	pages := 0
	p := c.NewListEntitiesPager(o)
	for p.More() {
		page, err := p.NextPage(e.ctx)
		tbMust(e.t, err)
		pages++
		for _, raw := range page.Entities {
			var m map[string]any
			tbMust(e.t, json.Unmarshal(raw, &m))
			out = append(out, m)
		}
	}
	return out, pages
}

// tbRowKeys lists the RowKeys of entities in order.
func tbRowKeys(ents []map[string]any) string {
	var ks []string
	for _, m := range ents {
		ks = append(ks, fmt.Sprint(m["RowKey"]))
	}
	return strings.Join(ks, ",")
}

// tbResp is a raw response.
type tbResp struct {
	status int
	header http.Header
	body   []byte
}

func (r tbResp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.body, err)
	}
	return m
}

// errCode returns the OData error code of a JSON error body.
func (r tbResp) errCode(t testing.TB) string {
	t.Helper()
	var m struct {
		E struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not an OData error: %v", r.body, err)
	}
	if h := r.header.Get("x-ms-error-code"); h != m.E.Code {
		t.Fatalf("x-ms-error-code %q, body code %q", h, m.E.Code)
	}
	return m.E.Code
}

// raw sends a request signed with SharedKeyLite as aztables signs it.
// rel is the path (and query) after the account, e.g. "Tables" or
// "mytable(PartitionKey='a',RowKey='b')".
func (e *tbEnv) raw(method, rel string, hdr map[string]string, body []byte) tbResp {
	e.t.Helper()
	u, err := url.Parse(e.app.TableURL + "/" + rel)
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resource := "/" + app.DevAccount + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	key, err := base64.StdEncoding.DecodeString(app.DevKey)
	if err != nil {
		e.t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(req.Header.Get("x-ms-date") + "\n" + resource))
	req.Header.Set("Authorization", "SharedKeyLite "+app.DevAccount+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbResp{status: resp.StatusCode, header: resp.Header, body: b}
}

// tbCode returns the error code and status of err, or "" and 0.
func tbCode(err error) (int, string) {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.ErrorCode
	}
	return 0, ""
}
