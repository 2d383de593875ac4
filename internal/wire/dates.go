package wire

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ISO7Layout is Azure's 7-fractional-digit UTC timestamp, used for
// x-ms-snapshot, error-body Time and similar values (Snapshot Blob,
// https://learn.microsoft.com/en-us/rest/api/storageservices/snapshot-blob,
// and recorded responses).
const ISO7Layout = "2006-01-02T15:04:05.0000000Z"

// FormatHTTPDate formats t as an RFC 1123 GMT date (Date, Last-Modified,
// x-ms-creation-time): "Mon, 02 Jan 2006 15:04:05 GMT" (Representation of
// date/time values in headers,
// https://learn.microsoft.com/en-us/rest/api/storageservices/representation-of-date-time-values-in-headers).
// Sub-second precision is dropped.
func FormatHTTPDate(t time.Time) string { return t.UTC().Format(httpTimeFormat) }

// FormatISO7 formats t in UTC with exactly 7 fractional digits, e.g.
// 2011-03-09T01:42:34.9360000Z (snapshot IDs, as Snapshot Blob returns them).
// Precision below 100 ns is truncated.
func FormatISO7(t time.Time) string { return t.UTC().Format(ISO7Layout) }

// ParseSnapshot parses a snapshot query value (snapshot=, prevsnapshot=,
// sharesnapshot=). It accepts RFC 3339 with 0–7 fractional digits and a Z or
// numeric offset, and returns the instant in UTC; FormatISO7 output always
// round-trips. More than 7 fractional digits (finer than the service's 100 ns
// resolution), an empty value or any other form is 400
// InvalidQueryParameterValue naming "snapshot" (inferred); callers parsing
// another parameter can rewrite the QueryParameterName detail.
func ParseSnapshot(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || fractionDigits(s) > 7 {
		return time.Time{}, azerr.InvalidQuery("snapshot", s)
	}
	return t.UTC(), nil
}

// fractionDigits counts the digits after the seconds' decimal point of an
// RFC 3339 string (0 when there is none).
func fractionDigits(s string) int {
	// The seconds end at index 19 in "2006-01-02T15:04:05".
	if len(s) <= 19 || s[19] != '.' {
		return 0
	}
	n := 0
	for i := 20; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n++
	}
	return n
}

// ParseISOTime parses the ISO 8601 UTC forms Azure accepts for access-policy
// and SAS times (signed identifier Start/Expiry, st/se; Create a service SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas,
// lists the accepted ISO 8601 UTC formats): "2006-01-02",
// "2006-01-02T15:04Z", "2006-01-02T15:04:05Z" and the latter with 1–7
// fractional digits; a numeric offset instead of Z is also accepted. The
// result is in UTC. Any other input is 400 InvalidInput with a message naming
// the value; callers usually map it to their own context (InvalidXmlNodeValue
// in a body, AuthenticationFailed for a SAS) (inferred).
func ParseISOTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02"} {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if layout == time.RFC3339Nano && fractionDigits(s) > 7 {
			break
		}
		return t.UTC(), nil
	}
	return time.Time{}, azerr.Newf(azerr.InvalidInput, "The value %q is not a valid ISO 8601 UTC time.", s)
}
