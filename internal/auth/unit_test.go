package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// newReq builds a server-side request (RequestURI set) with headers.
func newReq(method, target string, kv ...string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i < len(kv); i += 2 {
		r.Header.Add(kv[i], kv[i+1])
	}
	return r
}

func sign(r *http.Request, svc Service, scheme Scheme, key []byte, order HeaderOrder) *http.Request {
	sts := StringToSign(r, svc, scheme, devAccount, order)
	r.Header.Set("Authorization", scheme.String()+" "+devAccount+":"+ComputeSignature(key, sts))
	return r
}

// hmacB64 signs independently of ComputeSignature.
func hmacB64(key []byte, s string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func blobReq(kv ...string) *http.Request {
	base := []string{"x-ms-date", httpDate(fixedNow), "x-ms-version", "2026-12-06"}
	return newReq("GET", "/devstoreaccount1/c1/b%20x?comp=metadata", append(base, kv...)...)
}

func TestAnonymous(t *testing.T) {
	for _, svc := range []Service{Blob, Queue, Table, File} {
		acct, ok, err := Authenticate(blobReq(), svc, devLookup, fixedNow)
		if acct != "" || ok || err != nil {
			t.Fatalf("%v: got (%q, %v, %v)", svc, acct, ok, err)
		}
	}
}

func TestMalformedAuthorization(t *testing.T) {
	for _, v := range []string{
		"",
		"SharedKey",
		"SharedKey ",
		"SharedKey devstoreaccount1",
		"SharedKey :c2ln",
		"SharedKey devstoreaccount1:",
		"SharedKey devstoreaccount1:ab cd",
		"SharedKey devstore account1:abcd",
		"SharedKey\tdevstoreaccount1:abcd",
		"SharedKeyLite",
		"sharedkey devstoreaccount1:abcd",
		"Bearer eyJ0eXAiOiJKV1QifQ",
		"Basic dXNlcjpwYXNz",
		"SAS devstoreaccount1:abcd",
	} {
		t.Run(v, func(t *testing.T) {
			for _, svc := range []Service{Blob, Queue, Table, File} {
				e := wantCode(t, blobReq("Authorization", v), svc, fixedNow, azerr.InvalidAuthenticationInfo)
				if e.Status != 400 || detail(e) == "" {
					t.Fatalf("got %+v", e)
				}
			}
		})
	}
	t.Run("two headers", func(t *testing.T) {
		r := sign(blobReq(), Blob, SharedKey, devKey, CultureOrder)
		r.Header.Add("Authorization", r.Header.Get("Authorization"))
		wantCode(t, r, Blob, fixedNow, azerr.InvalidAuthenticationInfo)
	})
}

func TestDates(t *testing.T) {
	mk := func(kv ...string) *http.Request {
		return newReq("PUT", "/devstoreaccount1/q1?comp=metadata", append([]string{"x-ms-version", "2024-08-04"}, kv...)...)
	}
	cases := []struct {
		name    string
		req     *http.Request
		ok      bool
		contain string
	}{
		{"missing", mk(), false, "not specified"},
		{"unparsable x-ms-date", mk("x-ms-date", "yesterday"), false, "not a valid HTTP date"},
		{"unparsable Date", mk("Date", "2026-03-04T05:06:07Z"), false, "not a valid HTTP date"},
		{"16 minutes old", mk("x-ms-date", httpDate(fixedNow.Add(-16*time.Minute))), false, "too old"},
		{"16 minutes ahead", mk("x-ms-date", httpDate(fixedNow.Add(16*time.Minute))), false, "too old"},
		{"15 minutes old", mk("x-ms-date", httpDate(fixedNow.Add(-15*time.Minute))), true, ""},
		{"14 minutes ahead", mk("x-ms-date", httpDate(fixedNow.Add(14*time.Minute))), true, ""},
		{"Date only", mk("Date", httpDate(fixedNow)), true, ""},
		{"RFC 850 Date", mk("Date", fixedNow.Format(time.RFC850)), true, ""},
		{"x-ms-date governs", mk("x-ms-date", httpDate(fixedNow), "Date", httpDate(fixedNow.Add(-time.Hour))), true, ""},
		{"stale x-ms-date, fresh Date", mk("x-ms-date", httpDate(fixedNow.Add(-time.Hour)), "Date", httpDate(fixedNow)), false, "too old"},
	}
	for _, svc := range []Service{Blob, Queue, Table, File} {
		for _, scheme := range []Scheme{SharedKey, SharedKeyLite} {
			for _, c := range cases {
				t.Run(svc.String()+"/"+scheme.String()+"/"+c.name, func(t *testing.T) {
					r := c.req.Clone(c.req.Context())
					sign(r, svc, scheme, devKey, CultureOrder)
					if c.ok {
						wantOK(t, r, svc, fixedNow)
						return
					}
					e := wantCode(t, r, svc, fixedNow, azerr.AuthenticationFailed)
					if !strings.Contains(detail(e), c.contain) {
						t.Fatalf("detail %q lacks %q", detail(e), c.contain)
					}
				})
			}
		}
	}
}

// The Date header is signed for Blob/Queue/File only when x-ms-date is absent.
func TestDateFieldSigned(t *testing.T) {
	r := sign(newReq("GET", "/devstoreaccount1/c1", "Date", httpDate(fixedNow), "x-ms-version", "2026-12-06"), Blob, SharedKey, devKey, CultureOrder)
	wantOK(t, r, Blob, fixedNow)
	r.Header.Set("Date", httpDate(fixedNow.Add(time.Second)))
	wantCode(t, r, Blob, fixedNow, azerr.AuthenticationFailed)

	r = sign(blobReq(), Blob, SharedKey, devKey, CultureOrder)
	r.Header.Set("Date", httpDate(fixedNow.Add(time.Second))) // unsigned next to x-ms-date
	wantOK(t, r, Blob, fixedNow)
}

func TestAccountsAndKeys(t *testing.T) {
	t.Run("first key", func(t *testing.T) {
		wantOK(t, sign(blobReq(), Blob, SharedKey, devKey, CultureOrder), Blob, fixedNow)
	})
	t.Run("second key", func(t *testing.T) {
		for _, svc := range []Service{Blob, Queue, Table, File} {
			wantOK(t, sign(blobReq(), svc, SharedKeyLite, devKey2, OrdinalOrder), svc, fixedNow)
			wantOK(t, sign(blobReq(), svc, SharedKey, devKey2, CultureOrder), svc, fixedNow)
		}
	})
	t.Run("foreign key", func(t *testing.T) {
		e := wantCode(t, sign(blobReq(), Blob, SharedKey, stranger, CultureOrder), Blob, fixedNow, azerr.AuthenticationFailed)
		if !strings.Contains(detail(e), "MAC signature") {
			t.Fatal(detail(e))
		}
	})
	t.Run("unknown account", func(t *testing.T) {
		r := newReq("GET", "/nobody/c1", "x-ms-date", httpDate(fixedNow))
		r.Header.Set("Authorization", "SharedKey nobody:"+ComputeSignature(devKey, StringToSign(r, Blob, SharedKey, "nobody", CultureOrder)))
		e := wantCode(t, r, Blob, fixedNow, azerr.AuthenticationFailed)
		if !strings.Contains(detail(e), "does not exist") {
			t.Fatal(detail(e))
		}
	})
	t.Run("URL account differs", func(t *testing.T) {
		r := newReq("GET", "/otheraccount/c1", "x-ms-date", httpDate(fixedNow))
		r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+ComputeSignature(devKey, StringToSign(r, Blob, SharedKey, devAccount, CultureOrder)))
		e := wantCode(t, r, Blob, fixedNow, azerr.AuthenticationFailed)
		if !strings.Contains(detail(e), "does not match") {
			t.Fatal(detail(e))
		}
	})
	t.Run("nil lookup", func(t *testing.T) {
		r := sign(blobReq(), Blob, SharedKey, devKey, CultureOrder)
		if _, ok, err := Authenticate(r, Blob, nil, fixedNow); ok || !azerr.Has(err, azerr.AuthenticationFailed) {
			t.Fatal(ok, err)
		}
	})
	t.Run("account without keys", func(t *testing.T) {
		r := sign(blobReq(), Blob, SharedKey, devKey, CultureOrder)
		noKeys := func(string) (Account, bool) { return Account{Name: devAccount}, true }
		if _, ok, err := Authenticate(r, Blob, noKeys, fixedNow); ok || !azerr.Has(err, azerr.AuthenticationFailed) {
			t.Fatal(ok, err)
		}
	})
}

func TestBadSignatureShapes(t *testing.T) {
	long := base64.StdEncoding.EncodeToString(make([]byte, 64))
	for _, sig := range []string{
		"not-base64!!",
		"c2hvcnQ=",
		long,
		long[:44], // right length, decodes to 33 bytes of garbage
		base64.RawStdEncoding.EncodeToString(make([]byte, 32)), // unpadded
		strings.Repeat("=", 44),
	} {
		r := blobReq("Authorization", "SharedKey devstoreaccount1:"+sig)
		e := wantCode(t, r, Blob, fixedNow, azerr.AuthenticationFailed)
		if !strings.Contains(detail(e), "'"+sig+"'") {
			t.Fatalf("detail %q", detail(e))
		}
	}
}

func TestMACDetailWording(t *testing.T) {
	r := blobReq("Authorization", "SharedKey devstoreaccount1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	e := wantCode(t, r, Blob, fixedNow, azerr.AuthenticationFailed)
	sts := StringToSign(r, Blob, SharedKey, devAccount, CultureOrder)
	want := "The MAC signature found in the HTTP request 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' is not the same as any computed signature. Server used following string to sign: '" + sts + "'."
	if detail(e) != want {
		t.Fatalf("detail\n%q\nwant\n%q", detail(e), want)
	}
	if e.Status != 403 || e.Code != "AuthenticationFailed" {
		t.Fatal(e)
	}
}

// Both header orders are accepted for every non-Table service, whichever
// client produced them.
func TestBothOrdersAccepted(t *testing.T) {
	for _, svc := range []Service{Blob, Queue, File} {
		for _, scheme := range []Scheme{SharedKey, SharedKeyLite} {
			for _, order := range []HeaderOrder{CultureOrder, OrdinalOrder} {
				r := blobReq("x-ms-meta-a-c", "1", "x-ms-meta-ab", "2")
				if StringToSign(r, svc, scheme, devAccount, CultureOrder) == StringToSign(r, svc, scheme, devAccount, OrdinalOrder) {
					t.Fatal("orders agree")
				}
				wantOK(t, sign(r, svc, scheme, devKey2, order), svc, fixedNow)
			}
		}
	}
}

// Literal strings-to-sign, written out by hand from the rules.
func TestStringToSignLiterals(t *testing.T) {
	date := "Fri, 26 Jun 2015 23:39:12 GMT"
	now, _ := http.ParseTime(date)
	cases := []struct {
		name   string
		svc    Service
		scheme Scheme
		req    *http.Request
		want   string
	}{
		{
			// The example in Azure's "Authorize with Shared Key" page.
			"blob sharedkey doc example", Blob, SharedKey,
			newReq("GET", "/myaccount/mycontainer?restype=container&comp=metadata&timeout=20",
				"x-ms-date", date, "x-ms-version", "2015-02-21"),
			"GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + date + "\nx-ms-version:2015-02-21\n/myaccount/myaccount/mycontainer\ncomp:metadata\nrestype:container\ntimeout:20",
		},
		{
			"blob sharedkey all fields", Blob, SharedKey,
			newReq("PUT", "/myaccount/c/dir%2Fa%20b?comp=block&blockid=QUJD%2B%2F%3D%3D&blockid=AAA&Timeout=5&empty=",
				"Content-Encoding", "gzip", "Content-Language", "en", "Content-Length", "11",
				"Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==", "Content-Type", "text/plain",
				"Date", "ignored", "If-Modified-Since", "ims", "If-Match", `"e1"`, "If-None-Match", "*",
				"If-Unmodified-Since", "ius", "Range", "bytes=0-1",
				"x-ms-date", date, "X-MS-Meta-Multi", "b", "x-ms-meta-multi", "a", "x-ms-version", "2026-12-06"),
			"PUT\ngzip\nen\n11\nXrY7u+Ae7tCTyyK7j1rNww==\ntext/plain\n\nims\n\"e1\"\n*\nius\nbytes=0-1\n" +
				"x-ms-date:" + date + "\nx-ms-meta-multi:b,a\nx-ms-version:2026-12-06\n" +
				"/myaccount/myaccount/c/dir%2Fa%20b\nblockid:AAA,QUJD+/==\ncomp:block\nempty:\ntimeout:5",
		},
		{
			"blob sharedkey content-length 0", Blob, SharedKey,
			newReq("PUT", "/myaccount/c", "Content-Length", "0", "x-ms-date", date, "x-ms-version", "2015-02-21"),
			"PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + date + "\nx-ms-version:2015-02-21\n/myaccount/myaccount/c",
		},
		{
			"blob sharedkey content-length 0 before 2015-02-21", Blob, SharedKey,
			newReq("PUT", "/myaccount/c", "Content-Length", "0", "x-ms-date", date, "x-ms-version", "2014-02-14"),
			"PUT\n\n\n0\n\n\n\n\n\n\n\n\nx-ms-date:" + date + "\nx-ms-version:2014-02-14\n/myaccount/myaccount/c",
		},
		{
			"queue sharedkey Date without x-ms-date", Queue, SharedKey,
			newReq("GET", "/myaccount", "Date", date, "x-ms-version", "2024-08-04"),
			"GET\n\n\n\n\n\n" + date + "\n\n\n\n\n\nx-ms-version:2024-08-04\n/myaccount/myaccount",
		},
		{
			"file sharedkeylite", File, SharedKeyLite,
			newReq("PUT", "/myaccount/share/f%20x?comp=range&timeout=9",
				"Content-MD5", "md5", "Content-Type", "text/plain", "Content-Length", "3", "x-ms-date", date, "x-ms-version", "2026-06-06"),
			"PUT\nmd5\ntext/plain\n\nx-ms-date:" + date + "\nx-ms-version:2026-06-06\n/myaccount/myaccount/share/f%20x?comp=range",
		},
		{
			"blob sharedkeylite Date without x-ms-date", Blob, SharedKeyLite,
			newReq("GET", "/myaccount/c?restype=container", "Date", date),
			"GET\n\n\n" + date + "\n/myaccount/myaccount/c",
		},
		{
			"table sharedkey", Table, SharedKey,
			newReq("GET", "/myaccount/mytable(PartitionKey='pk',RowKey='r%20k')?$select=a",
				"Content-Type", "application/json", "x-ms-date", date, "Date", "other", "x-ms-version", "2019-02-02"),
			"GET\n\napplication/json\n" + date + "\n/myaccount/myaccount/mytable(PartitionKey='pk',RowKey='r%20k')",
		},
		{
			"table sharedkeylite comp", Table, SharedKeyLite,
			newReq("GET", "/myaccount/mytable?comp=acl&timeout=3", "x-ms-date", date),
			date + "\n/myaccount/myaccount/mytable?comp=acl",
		},
		{
			"table sharedkeylite Date fallback", Table, SharedKeyLite,
			newReq("GET", "/myaccount/Tables?%24filter=a+eq+1", "Date", date),
			date + "\n/myaccount/myaccount/Tables",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, order := range []HeaderOrder{CultureOrder, OrdinalOrder} {
				if got := StringToSign(c.req, c.svc, c.scheme, "myaccount", order); got != c.want {
					t.Fatalf("StringToSign\n%q\nwant\n%q", got, c.want)
				}
			}
			lookup := func(n string) (Account, bool) { return Account{Name: n, Keys: [][]byte{devKey}}, n == "myaccount" }
			c.req.Header.Set("Authorization", c.scheme.String()+" myaccount:"+hmacB64(devKey, c.want))
			acct, ok, err := Authenticate(c.req, c.svc, lookup, now)
			if acct != "myaccount" || !ok || err != nil {
				t.Fatalf("Authenticate = (%q, %v, %v)", acct, ok, err)
			}
		})
	}
}

// A server-side request's path is signed as sent, even where net/url would
// re-encode it.
func TestRequestURIVerbatim(t *testing.T) {
	r := newReq("GET", "/devstoreaccount1/c1/a|b%7e", "x-ms-date", httpDate(fixedNow), "x-ms-version", "2026-12-06")
	if r.URL.EscapedPath() == "/devstoreaccount1/c1/a|b%7e" {
		t.Fatal("test premise: net/url keeps this path")
	}
	sts := "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:" + httpDate(fixedNow) + "\nx-ms-version:2026-12-06\n/devstoreaccount1/devstoreaccount1/c1/a|b%7e"
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+hmacB64(devKey, sts))
	wantOK(t, r, Blob, fixedNow)
}

func TestAccountFromPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"/":                         "",
		"//x":                       "",
		"/devstoreaccount1":         "devstoreaccount1",
		"/devstoreaccount1/":        "devstoreaccount1",
		"/devstoreaccount1/c/b%2Fc": "devstoreaccount1",
		"devstoreaccount1/c":        "devstoreaccount1",
		"/devstoreaccount1()":       "devstoreaccount1()",
	} {
		if got := AccountFromPath(in); got != want {
			t.Errorf("AccountFromPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalizedResource(t *testing.T) {
	cases := []struct{ path, query, full, lite string }{
		{"", "", "/acct/", "/acct/"},
		{"/acct", "", "/acct/acct", "/acct/acct"},
		{"/acct/c/a%2Fb%20c", "comp=list&prefix=a%2Fb+c", "/acct/acct/c/a%2Fb%20c\ncomp:list\nprefix:a/b c", "/acct/acct/c/a%2Fb%20c?comp=list"},
		{"/acct/c", "B=2&a=1&b=1&a=0", "/acct/acct/c\na:0,1\nb:1,2", "/acct/acct/c"},
		{"/acct/c", "x&&y=&;z=1&bad=%zz&%24filter=a", "/acct/acct/c\n$filter:a\nx:\ny:", "/acct/acct/c"},
		{"/acct/c", "COMP=a%2Cb&comp=c", "/acct/acct/c\ncomp:a,b,c", "/acct/acct/c?comp=a,b"},
		{"/acct/c", "c%6Fmp=x", "/acct/acct/c\ncomp:x", "/acct/acct/c?comp=x"},
	}
	for _, c := range cases {
		if got := CanonicalizedResource("acct", c.path, c.query); got != c.full {
			t.Errorf("CanonicalizedResource(%q, %q) = %q, want %q", c.path, c.query, got, c.full)
		}
		if got := CanonicalizedResourceLite("acct", c.path, c.query); got != c.lite {
			t.Errorf("CanonicalizedResourceLite(%q, %q) = %q, want %q", c.path, c.query, got, c.lite)
		}
	}
}

func TestCompareHeaderNames(t *testing.T) {
	less := [][2]string{
		{"x-ms-meta-ab", "x-ms-meta-a-c"}, // '-' ignored at the primary level
		{"x-ms-meta-ac", "x-ms-meta-a-c"}, // ...then a hyphen sorts after a plain char
		{"x-ms-meta-a'c", "x-ms-meta-a-c"},
		{"x-ms-meta-a_b", "x-ms-meta-ab"}, // '_' before letters
		{"x-ms-meta-a", "x-ms-meta-a-"},
		{"x-ms-meta-a9", "x-ms-meta-aa"},
		{"x-ms-meta-a+", "x-ms-meta-a0"},
		{"x-ms-meta-a~", "x-ms-meta-a+"},
		{"x-ms-blob-type", "x-ms-date"},
		{"x-ms-date", "x-ms-version"},
		{"a", "B"},
		{"a:b", "a;b"}, // a primary tie broken by bytes
		{"a\xfe\xff", "a\xff"},
	}
	for _, p := range less {
		if c := CompareHeaderNames(p[0], p[1]); c != -1 {
			t.Errorf("Compare(%q, %q) = %d, want -1", p[0], p[1], c)
		}
		if c := CompareHeaderNames(p[1], p[0]); c != 1 {
			t.Errorf("Compare(%q, %q) = %d, want 1", p[1], p[0], c)
		}
	}
	// A total order: antisymmetric, transitive, zero only on equality.
	rng := rand.New(rand.NewSource(7))
	gen := func() string {
		const alpha = "ab-'_:A~\x80"
		b := make([]byte, rng.Intn(5))
		for i := range b {
			b[i] = alpha[rng.Intn(len(alpha))]
		}
		return string(b)
	}
	for i := 0; i < 20000; i++ {
		a, b, c := gen(), gen(), gen()
		ab, ba := CompareHeaderNames(a, b), CompareHeaderNames(b, a)
		if ab != -ba || (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q,%q)=%d, reverse %d", a, b, ab, ba)
		}
		if ab <= 0 && CompareHeaderNames(b, c) <= 0 && CompareHeaderNames(a, c) > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but %q > %q", a, b, c, a, c)
		}
	}
}

func TestCanonicalizedHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("X-Ms-Version", "1")
	h["x-ms-meta-lower"] = []string{"a", "b"}
	h.Set("X-Ms-Meta-Empty", "")
	h.Set("Content-Type", "ignored")
	want := "x-ms-meta-empty:\nx-ms-meta-lower:a,b\nx-ms-version:1\n"
	for _, o := range []HeaderOrder{CultureOrder, OrdinalOrder} {
		if got := CanonicalizedHeaders(h, o); got != want {
			t.Errorf("order %d: %q, want %q", o, got, want)
		}
	}
	if got := CanonicalizedHeaders(http.Header{}, CultureOrder); got != "" {
		t.Errorf("empty: %q", got)
	}
}

func TestParseAuthorization(t *testing.T) {
	s, a, sig, err := ParseAuthorization("SharedKeyLite acct:abc=")
	if err != nil || s != SharedKeyLite || a != "acct" || sig != "abc=" {
		t.Fatal(s, a, sig, err)
	}
	s, a, sig, err = ParseAuthorization("SharedKey  acct:abc=")
	if err != nil || s != SharedKey || a != "acct" || sig != "abc=" {
		t.Fatal(s, a, sig, err)
	}
}

// macInto must agree with crypto/hmac for every key and message length,
// including keys longer than the SHA-256 block.
func TestMacIntoMatchesCryptoHMAC(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 2000; i++ {
		key := make([]byte, rng.Intn(200))
		msg := make([]byte, rng.Intn(300))
		rng.Read(key)
		rng.Read(msg)
		buf := append(make([]byte, blockSize), msg...)
		got := macInto(key, buf)
		if want := hmacB64(key, string(msg)); base64.StdEncoding.EncodeToString(got[:]) != want {
			t.Fatalf("key len %d, msg len %d: mismatch", len(key), len(msg))
		}
	}
}
