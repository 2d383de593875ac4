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
func FormatHTTPDate(t time.Time) string {
	var b [len(httpTimeFormat)]byte
	return string(AppendHTTPDate(b[:0], t))
}

const (
	weekdays = "SunMonTueWedThuFriSat"
	months   = "JanFebMarAprMayJunJulAugSepOctNovDec"
)

// AppendHTTPDate appends FormatHTTPDate's form of t to b: the bytes
// t.UTC().Format(http.TimeFormat) makes, written field by field, since
// every response carries two or three such dates (Date, Last-Modified,
// x-ms-creation-time). A year outside 0–9999 is left to time.Format.
func AppendHTTPDate(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, httpTimeFormat)
	}
	hour, min, sec := t.Clock()
	wd := int(t.Weekday()) * 3
	mo := (int(month) - 1) * 3
	b = append(b, weekdays[wd:wd+3]...)
	b = append(b, ',', ' ', byte('0'+day/10), byte('0'+day%10), ' ')
	b = append(b, months[mo:mo+3]...)
	b = append(b, ' ', byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), ' ')
	b = append(b, byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+min/10), byte('0'+min%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	return append(b, " GMT"...)
}

// httpDates are the forms of an HTTP date (RFC 9110 section 5.6.7):
// IMF-fixdate and the obsolete RFC 850 and asctime forms, in the order
// net/http's ParseTime tries them.
var httpDates = [...]string{httpTimeFormat, time.RFC850, time.ANSIC}

// ParseHTTPDate parses an HTTP date (x-ms-date, Date, If-Modified-Since,
// ...) as net/http's ParseTime does, to the same instant or the same
// refusal, without importing net/http: the canonical IMF-fixdate every
// client sends is read field by field (ParseIMFFixdate), anything else
// goes through time.Parse with each of the three forms.
func ParseHTTPDate(s string) (time.Time, error) {
	if t, ok := ParseIMFFixdate(s); ok {
		return t, nil
	}
	var t time.Time
	var err error
	for _, layout := range httpDates {
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return t, err
}

// ParseIMFFixdate reads s if it is an IMF-fixdate ("Mon, 02 Jan 2006
// 15:04:05 GMT", RFC 9110 section 5.6.7, the form every client sends)
// in canonical case with its fields in range, field by field and without
// time.Parse; ok is false for anything else, which callers leave to
// net/http's ParseTime (it also takes other cases and forms, and ignores
// the weekday). Where ok, the time is ParseTime's.
func ParseIMFFixdate(s string) (t time.Time, ok bool) {
	if len(s) != len(httpTimeFormat) || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
		s[16] != ' ' || s[19] != ':' || s[22] != ':' || s[25:] != " GMT" {
		return time.Time{}, false
	}
	if !canonicalName(weekdays, s[0:3]) {
		return time.Time{}, false
	}
	mo := -1
	for i := 0; i < 12; i++ {
		if months[i*3:i*3+3] == s[8:11] {
			mo = i + 1
			break
		}
	}
	day, ok1 := digits(s[5:7])
	year, ok2 := digits(s[12:16])
	hour, ok3 := digits(s[17:19])
	min, ok4 := digits(s[20:22])
	sec, ok5 := digits(s[23:25])
	if mo < 0 || !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || day < 1 || hour > 23 || min > 59 || sec > 59 {
		return time.Time{}, false
	}
	t = time.Date(year, time.Month(mo), day, hour, min, sec, 0, time.UTC)
	if t.Day() != day { // 31 April, 29 February of a common year
		return time.Time{}, false
	}
	return t, true
}

func canonicalName(names, s string) bool {
	for i := 0; i < len(names); i += 3 {
		if names[i:i+3] == s {
			return true
		}
	}
	return false
}

func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

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
