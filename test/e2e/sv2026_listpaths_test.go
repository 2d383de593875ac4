package e2e

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// beginFromPolicy adds Path - List's beginFrom to every List Paths request
// the azdatalake client sends, page after page, as the SDKs that have the
// option (azure-storage-file-datalake's list_paths(start_from=...), Java's
// ListPathsOptions.setStartFrom, .NET's DataLakeGetPathsOptions.StartFrom)
// send it: azdatalake 1.4.2 has no such option.
type beginFromPolicy string

func (p beginFromPolicy) Do(req *policy.Request) (*http.Response, error) {
	u := req.Raw().URL
	if q := u.Query(); req.Raw().Method == http.MethodGet && q.Get("resource") == "filesystem" {
		q.Set("beginFrom", string(p))
		u.RawQuery = q.Encode()
	}
	return req.Next()
}

// fsFrom is a client of filesystem name whose List Paths carry beginFrom.
func (e *dlEnv) fsFrom(name, from string) *filesystem.Client {
	e.t.Helper()
	o := &filesystem.ClientOptions{ClientOptions: e.opts.ClientOptions}
	o.PerCallPolicies = append(slices.Clone(o.PerCallPolicies), beginFromPolicy(from))
	c, err := filesystem.NewClientWithSharedKeyCredential(e.app.DFSURL+"/"+name, e.cred, o)
	must(e.t, err)
	return c
}

// TestSV2026ListPathsBeginFrom: Path - List's beginFrom (the SDKs'
// StartFrom; "a relative path within the specified directory where the
// listing will start from", Path - List in the Data Lake Storage Gen2 REST
// reference) starts a hierarchical listing at that path, inclusive, in the
// listing's depth-first order: a directory with its subtree, a path that
// does not exist at the next one after it, relative to directory=, one
// level or recursive, on every page size with the continuation. A
// one-level listing takes one name only. Fails before the change: the
// parameter was ignored and every listing started at the beginning.
func TestSV2026ListPathsBeginFrom(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("begin")
	for _, d := range []string{"b", "b/2", "d", "d/e"} {
		_, err := fs.NewDirectoryClient(d).Create(e.ctx, nil)
		must(t, err)
	}
	for _, f := range []string{"a", "a-b", "b/1", "b/2/x", "b/3", "c", "d/e/f", "d/g", "e"} {
		_, err := fs.NewFileClient(f).Create(e.ctx, nil)
		must(t, err)
	}
	// want is the listing without beginFrom less the paths before from:
	// depth-first order is the order of the component lists.
	want := func(dir string, recursive bool, from string) []string {
		var out []string
		f := strings.Split(from, "/")
		for _, p := range listAll(t, e, fs, dir, recursive, 5000) {
			rel := strings.TrimSuffix(p, "/")
			if dir != "" {
				rel = strings.TrimPrefix(rel, dir+"/")
			}
			if slices.Compare(strings.Split(rel, "/"), f) >= 0 {
				out = append(out, p)
			}
		}
		return out
	}
	cases := []struct {
		dir       string
		recursive bool
		from      string
		want      []string
	}{
		{"", true, "0", []string{"a", "a-b", "b/", "b/1", "b/2/", "b/2/x", "b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "a-a", []string{"a-b", "b/", "b/1", "b/2/", "b/2/x", "b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "b", []string{"b/", "b/1", "b/2/", "b/2/x", "b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "b/2", []string{"b/2/", "b/2/x", "b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "b/2/x", []string{"b/2/x", "b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "b/25", []string{"b/3", "c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "b/4/y", []string{"c", "d/", "d/e/", "d/e/f", "d/g", "e"}},
		{"", true, "e", []string{"e"}},
		{"", true, "z", nil},
		{"", false, "b", []string{"b/", "c", "d/", "e"}},
		{"", false, "bb", []string{"c", "d/", "e"}},
		{"d", true, "e/f", []string{"d/e/f", "d/g"}},
		{"d", true, "f", []string{"d/g"}},
		{"d", false, "e", []string{"d/e/", "d/g"}},
		{"b", true, "/2/", []string{"b/2/", "b/2/x", "b/3"}},
	}
	for _, c := range cases {
		if w := want(c.dir, c.recursive, strings.Trim(c.from, "/")); !reflect.DeepEqual(w, c.want) {
			t.Fatalf("case %+v: the test's own order gives %q", c, w)
		}
		for n := int32(1); n <= 4; n++ {
			if got := listAll(t, e, e.fsFrom("begin", c.from), c.dir, c.recursive, n); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("directory %q recursive %v beginFrom %q maxResults %d:\n got %q\nwant %q", c.dir, c.recursive, c.from, n, got, c.want)
			}
		}
	}

	// A continuation and beginFrom together: the listing goes on from the
	// later of the two.
	first := func(q string) (string, string) {
		resp, body := e.raw(http.MethodGet, "/begin?resource=filesystem&recursive=true&maxResults=1&"+q, nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, body)
		}
		return string(body), resp.Header.Get("x-ms-continuation")
	}
	_, tokA := first("")                                                  // after "a"
	_, tokD := first("beginFrom=d%2Fe")                                   // after "d/e"
	body, _ := first("beginFrom=c&continuation=" + url.QueryEscape(tokA)) // c is later
	if !strings.Contains(body, `"name":"c"`) {
		t.Fatalf("continuation after a, beginFrom c: %s", body)
	}
	body, _ = first("beginFrom=b&continuation=" + url.QueryEscape(tokD)) // the continuation is later
	if !strings.Contains(body, `"name":"d/e/f"`) {
		t.Fatalf("continuation after d/e, beginFrom b: %s", body)
	}

	// A one-level listing starts from one name; a path that is no path
	// is refused too.
	for _, q := range []string{"recursive=false&beginFrom=b%2F2", "recursive=true&beginFrom=b%2F..%2Fc", "recursive=true&beginFrom=b%2F%2F2"} {
		resp, body := e.raw(http.MethodGet, "/begin?resource=filesystem&"+q, nil, nil)
		if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidQueryParameterValue" {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, body)
		}
	}
}

// TestSV2026ListPathsBeginFromFlat: beginFrom on the dfs endpoint of an
// account without a hierarchical namespace, whose listing is in blob-name
// order (List Blobs' startFrom under the directory's prefix). Fails
// before the change: the parameter was ignored.
func TestSV2026ListPathsBeginFromFlat(t *testing.T) {
	e := startDL(t, false)
	fs := e.mkfs("flatbegin")
	for _, f := range []string{"a", "a-b", "b/1", "b/2/x", "b/3", "c"} {
		_, err := fs.NewFileClient(f).Create(e.ctx, nil)
		must(t, err)
	}
	cases := []struct {
		dir       string
		recursive bool
		from      string
		want      []string
	}{
		{"", true, "b/2", []string{"b/2/x", "b/3", "c"}},
		{"", true, "a-a", []string{"a-b", "b/1", "b/2/x", "b/3", "c"}},
		{"", false, "b", []string{"b/", "c"}},
		{"b", true, "2", []string{"b/2/x", "b/3"}},
		{"b", false, "3", []string{"b/3"}},
	}
	for _, c := range cases {
		for n := int32(1); n <= 3; n++ {
			if got := listAll(t, e, e.fsFrom("flatbegin", c.from), c.dir, c.recursive, n); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("directory %q recursive %v beginFrom %q maxResults %d:\n got %q\nwant %q", c.dir, c.recursive, c.from, n, got, c.want)
			}
		}
	}
	resp, body := e.raw(http.MethodGet, "/flatbegin?resource=filesystem&recursive=false&beginFrom=b%2F2", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "InvalidQueryParameterValue" {
		t.Fatalf("one level from b/2: %d %s", resp.StatusCode, body)
	}
}
