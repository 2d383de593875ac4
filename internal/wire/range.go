package wire

import (
	"math"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Header names for byte ranges. x-ms-range wins over Range when both are sent
// (Specifying the range header for Blob service operations,
// https://learn.microsoft.com/en-us/rest/api/storageservices/specifying-the-range-header-for-blob-service-operations).
const (
	HeaderXMsRange = "x-ms-range"
	HeaderRange    = "Range"
)

// OpenEnd is Range.End for an open-ended range (bytes=s-).
const OpenEnd int64 = -1

// PageSize is the page-blob page size: page ranges must start and end on
// 512-byte boundaries (Put Page,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-page).
const PageSize = 512

// Range is a parsed single byte range. End is inclusive, or OpenEnd.
type Range struct {
	Start int64
	End   int64
}

// Open reports whether the range has no end (bytes=s-).
func (r Range) Open() bool { return r.End == OpenEnd }

// String formats the range as a request header value (bytes=s-e or bytes=s-).
func (r Range) String() string {
	if r.Open() {
		return "bytes=" + strconv.FormatInt(r.Start, 10) + "-"
	}
	return "bytes=" + strconv.FormatInt(r.Start, 10) + "-" + strconv.FormatInt(r.End, 10)
}

// ParseRange reads x-ms-range (which wins when non-empty) or Range. It
// returns (nil, nil) when neither header is present or both are empty.
// Accepted forms: "bytes=s-e" with s <= e, and "bytes=s-" (open end); s and
// e are decimal int64. Suffix ranges (bytes=-n), multiple ranges and other
// units are not supported by Azure (Specifying the range header for Blob
// service operations) and are malformed here.
//
// A malformed value gives 400 InvalidHeaderValue with HeaderName set to the
// header that was used. Note for Get Blob / Get File: the real service
// ignores a malformed range and returns the whole resource (RFC 9110 §14.2;
// Azurite aligned with Azure in Azure/Azurite#2458 and #2462), so download
// handlers should treat an error from ParseRange as "no range". Writes (Put
// Page, Put Range) must return the error.
func ParseRange(h Header) (*Range, error) {
	name := HeaderXMsRange
	v, _ := headerValue(h, "X-Ms-Range") // HeaderXMsRange in canonical form: no copy made
	if v == "" {
		name = HeaderRange
		v, _ = headerValue(h, HeaderRange)
		if v == "" {
			return nil, nil
		}
	}
	r, ok := parseRangeValue(v)
	if !ok {
		return nil, azerr.InvalidHeader(name, v)
	}
	return &r, nil
}

func parseRangeValue(v string) (Range, bool) {
	v = strings.TrimSpace(v)
	const unit = "bytes="
	if len(v) < len(unit) || !strings.EqualFold(v[:len(unit)], unit) {
		return Range{}, false
	}
	spec := v[len(unit):]
	dash := strings.IndexByte(spec, '-')
	if dash <= 0 {
		return Range{}, false
	}
	start, ok := parseDigits(spec[:dash])
	if !ok {
		return Range{}, false
	}
	rest := spec[dash+1:]
	if rest == "" {
		return Range{Start: start, End: OpenEnd}, true
	}
	end, ok := parseDigits(rest)
	if !ok || end < start {
		return Range{}, false
	}
	return Range{Start: start, End: end}, true
}

// parseDigits parses a non-empty run of ASCII digits as a non-negative
// int64 (no sign, no spaces).
func parseDigits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// Resolve clips the range to a resource of the given size and returns the
// offset and length to serve. A start at or beyond the size (which includes
// every range on an empty resource) is 416 InvalidRange carrying the header
// "Content-Range: bytes */size", as the real service sends
// (Azure/azure-sdk-for-net#10827, floci-az#81); azblob treats that 416 as
// "empty blob" (its DownloadStream retries without a range). An end beyond
// the size is clipped to size-1 (RFC 9110 §14.1.2).
func (r Range) Resolve(size int64) (off, n int64, err error) {
	if size < 0 || r.Start >= size {
		if size < 0 {
			size = 0
		}
		return 0, 0, azerr.New(azerr.InvalidRange).WithHeader("Content-Range", UnsatisfiedContentRange(size))
	}
	end := r.End
	if end == OpenEnd || end > size-1 {
		end = size - 1
	}
	return r.Start, end - r.Start + 1, nil
}

// ContentRange formats the Content-Range response header of a 206 reply:
// "bytes off-(off+n-1)/size". n must be > 0.
func ContentRange(off, n, size int64) string {
	return "bytes " + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10) + "/" + strconv.FormatInt(size, 10)
}

// UnsatisfiedContentRange formats the Content-Range header sent with a 416:
// "bytes */size", as the real service sends (Azure/azure-sdk-for-net#10827).
func UnsatisfiedContentRange(size int64) string {
	return "bytes */" + strconv.FormatInt(size, 10)
}

// PageRange validates the range of a Put Page / Clear Page request and
// returns its offset and length. Errors:
//   - no range header: 400 MissingRequiredHeader (x-ms-range) (inferred);
//   - malformed value: 400 InvalidHeaderValue (as ParseRange;
//     Azure/azure-sdk-for-go#331 saw InvalidHeaderValue for a bad Put Page
//     range);
//   - open end, start not a multiple of 512, or end+1 not a multiple of 512:
//     416 InvalidPageRange (Put Page; Blob service error codes).
//
// Checking the range against the blob size (also 416 InvalidPageRange: Blob
// service error codes, and the legacy .NET client's Azure/azure-storage-net
// page blob tests) and against Content-Length is left to the caller.
func PageRange(h Header) (off, n int64, err error) {
	r, err := ParseRange(h)
	if err != nil {
		return 0, 0, err
	}
	if r == nil {
		return 0, 0, azerr.MissingHeader(HeaderXMsRange)
	}
	// End == MaxInt64 would overflow the length; no blob is that large.
	if r.Open() || r.End == math.MaxInt64 || r.Start%PageSize != 0 || r.End%PageSize != PageSize-1 {
		return 0, 0, azerr.New(azerr.InvalidPageRange)
	}
	return r.Start, r.End - r.Start + 1, nil
}
