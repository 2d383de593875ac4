package auth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// checkResult fails unless Authenticate's result is one of the documented
// shapes: anonymous, or a 400/403 *azerr.Error.
func checkResult(t *testing.T, acct string, ok bool, err error) {
	t.Helper()
	if err == nil {
		if ok || acct != "" {
			t.Fatalf("unexpected success (%q, %v)", acct, ok)
		}
		return
	}
	e, isAz := azerr.As(err)
	if !isAz || ok || acct != "" {
		t.Fatalf("unexpected result (%q, %v, %v)", acct, ok, err)
	}
	switch {
	case e.Code == azerr.InvalidAuthenticationInfo && e.Status == 400:
	case e.Code == azerr.AuthenticationFailed && e.Status == 403:
	default:
		t.Fatalf("unexpected error %v", e)
	}
}

// FuzzAuthorizationHeader: arbitrary Authorization and date header values
// never panic and never authenticate.
func FuzzAuthorizationHeader(f *testing.F) {
	good := sign(blobReq(), Blob, SharedKey, devKey, CultureOrder).Header.Get("Authorization")
	for _, s := range []string{
		good, "", "SharedKey", "SharedKey ", "SharedKey :", "SharedKey a:b", "SharedKeyLite devstoreaccount1:" + strings.Repeat("A", 44),
		"SharedKey devstoreaccount1:" + strings.Repeat("/", 44), "SharedKey devstoreaccount1:" + strings.Repeat("A", 4000),
		"Bearer x", "SharedKey devstoreaccount1:=", "SharedKey \x00:\xff", "SharedKey devstoreaccount1:" + good[len(good)-44:len(good)-1] + "B",
	} {
		f.Add(s, httpDate(fixedNow))
	}
	f.Add(good, "")
	f.Add(good, "Mon, 99 Jan 2026 00:00:00 GMT")
	f.Add(good, "Monday, 02-Jan-06 15:04:05 MST")
	f.Fuzz(func(t *testing.T, authz, date string) {
		r := &http.Request{
			Method:     "GET",
			URL:        &url.URL{Path: "/devstoreaccount1/c1/b x", RawQuery: "comp=metadata"},
			RequestURI: "/devstoreaccount1/c1/b%20x?comp=metadata",
			Header:     http.Header{"Authorization": {authz}, "X-Ms-Date": {date}, "X-Ms-Version": {"2026-12-06"}},
		}
		for _, svc := range []Service{Blob, Queue, Table, File} {
			acct, ok, err := Authenticate(r, svc, devLookup, fixedNow)
			if authz == good && date == httpDate(fixedNow) && svc != Table {
				if !ok || err != nil || acct != devAccount {
					t.Fatalf("good request rejected: %v", err)
				}
				continue
			}
			checkResult(t, acct, ok, err)
		}
		_, _, _, _ = ParseAuthorization(authz)
	})
}

// FuzzCanonicalizedResource: arbitrary paths and queries never panic, in the
// canonicalizers or in Authenticate (server-side and client-side forms).
func FuzzCanonicalizedResource(f *testing.F) {
	for _, s := range [][2]string{
		{"/devstoreaccount1/c1/dir%2Fa%20b.txt", "comp=list&prefix=a+b&include=metadata%2Csnapshots"},
		{"/devstoreaccount1/mytable(PartitionKey='pk',RowKey='r%20k')", "%24filter=PartitionKey+eq+%27pk%27"},
		{"", ""}, {"/", "&&&"}, {"//", "=&=="}, {"/devstoreaccount1", "comp"}, {"/%zz", "a=%zz&b=%"},
		{"/devstoreaccount1/\x00\xff", ";comp=x;y"}, {"*", "comp=a&COMP=b&c%6fmp=c"}, {"/a?b", "#frag"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, query string) {
		full := CanonicalizedResource(devAccount, path, query)
		lite := CanonicalizedResourceLite(devAccount, path, query)
		if !strings.HasPrefix(full, "/"+devAccount) || !strings.HasPrefix(lite, "/"+devAccount) {
			t.Fatalf("resource lacks account: %q %q", full, lite)
		}
		if !strings.ContainsAny(path+query, "\n%") && strings.Contains(lite, "\n") {
			t.Fatalf("lite resource has a line break the path lacks: %q", lite)
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		for _, svc := range []Service{Blob, Queue, Table, File} {
			for _, scheme := range []Scheme{SharedKey, SharedKeyLite} {
				// Server-side form: the request-target verbatim.
				r := &http.Request{Method: "PUT", URL: &url.URL{}, RequestURI: target, Header: http.Header{
					"X-Ms-Date": {httpDate(fixedNow)}, "X-Ms-Version": {"2024-08-04"}, "X-Ms-Meta-A-C": {"1"}, "X-Ms-Meta-Ab": {"2"},
				}}
				if u, err := url.Parse(target); err == nil {
					r.URL = u
				}
				sts := StringToSign(r, svc, scheme, devAccount, CultureOrder)
				r.Header.Set("Authorization", scheme.String()+" "+devAccount+":"+ComputeSignature(devKey, sts))
				acct, ok, err := Authenticate(r, svc, devLookup, fixedNow)
				if AccountFromPath(pathOf(r)) == devAccount {
					// Correctly signed over whatever the path is: accepted.
					if !ok || err != nil || acct != devAccount {
						t.Fatalf("%v %v: signed request for %q rejected: %v", svc, scheme, target, err)
					}
				} else {
					checkResult(t, acct, ok, err)
				}
				// Client-side form: no RequestURI.
				r.RequestURI = ""
				acct, ok, err = Authenticate(r, svc, devLookup, fixedNow)
				if err != nil {
					checkResult(t, acct, ok, err)
				}
			}
		}
	})
}

func pathOf(r *http.Request) string {
	p, _ := requestTarget(r)
	return p
}

// FuzzCompareHeaderNames: the culture comparator is a total order.
func FuzzCompareHeaderNames(f *testing.F) {
	f.Add("x-ms-meta-a-c", "x-ms-meta-ab", "x-ms-meta-a'c")
	f.Add("a:b", "a;b", "a")
	f.Add("", "-", "'")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, ba := CompareHeaderNames(a, b), CompareHeaderNames(b, a)
		if ab != -ba || (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q,%q)=%d, reverse %d", a, b, ab, ba)
		}
		if ab <= 0 && CompareHeaderNames(b, c) <= 0 && CompareHeaderNames(a, c) > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q", a, b, c)
		}
	})
}
