package auth

import (
	"net/http"
	"testing"
)

// benchRequest is a server-side azblob-shaped upload: nine x-ms-* headers
// (with metadata whose two header orders differ) and a two-parameter query.
func benchRequest() *http.Request {
	r := newReq("PUT", "/devstoreaccount1/c1/dir%2Fa%20b.txt?comp=block&blockid=%2B%2F%2B%2FAA%3D%3D",
		"Content-Length", "11",
		"Content-Type", "application/octet-stream",
		"Content-MD5", "XrY7u+Ae7tCTyyK7j1rNww==",
		"x-ms-date", httpDate(fixedNow),
		"x-ms-version", "2026-12-06",
		"x-ms-client-request-id", "0f8fad5b-d9cb-469f-a165-70867728950e",
		"x-ms-blob-type", "BlockBlob",
		"x-ms-blob-content-type", "text/plain",
		"x-ms-meta-a-c", "1",
		"x-ms-meta-ab", "2",
		"x-ms-meta-zz", "3",
		"User-Agent", "azsdk-go-azblob/v1.8.3 (go1.26; linux)",
	)
	return r
}

// BenchmarkAuthenticateBlob: a valid request signed in azblob's order (the
// first order tried for Blob, so one string-to-sign and one HMAC).
func BenchmarkAuthenticateBlob(b *testing.B) {
	r := sign(benchRequest(), Blob, SharedKey, devKey, CultureOrder)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := Authenticate(r, Blob, benchLookup, fixedNow); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateBlobOrdinal: signed in byte order and by the second
// key, the slowest accepted path (two strings-to-sign, four HMACs).
func BenchmarkAuthenticateBlobOrdinal(b *testing.B) {
	r := sign(benchRequest(), Blob, SharedKey, devKey2, OrdinalOrder)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := Authenticate(r, Blob, benchLookup, fixedNow); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateTable: aztables' SharedKeyLite.
func BenchmarkAuthenticateTable(b *testing.B) {
	r := newReq("GET", "/devstoreaccount1/mytable()?%24filter=PartitionKey+eq+%27pk%27&%24top=10",
		"x-ms-date", httpDate(fixedNow), "x-ms-version", "2019-02-02", "Accept", "application/json;odata=minimalmetadata",
		"DataServiceVersion", "3.0")
	sign(r, Table, SharedKeyLite, devKey, CultureOrder)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := Authenticate(r, Table, benchLookup, fixedNow); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

var benchAccount = Account{Name: devAccount, Keys: [][]byte{devKey, devKey2}}

// benchLookup is devLookup without the per-call allocation.
func benchLookup(name string) (Account, bool) { return benchAccount, name == devAccount }
