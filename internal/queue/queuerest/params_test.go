package queuerest

import (
	"net/url"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/google/uuid"
)

// wantCode asserts err carries the Azure code (code "" means no error).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error %v", err)
		}
		return
	}
	e, ok := azerr.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got %v, want %s", err, code)
	}
	if e.Status != azerr.Status(code) {
		t.Fatalf("status %d for %s, catalog says %d", e.Status, code, azerr.Status(code))
	}
}

func query(s string) url.Values {
	q, err := url.ParseQuery(s)
	if err != nil {
		panic(err)
	}
	return q
}

func TestParsePutParams(t *testing.T) {
	const week = 7 * 24 * time.Hour
	tests := []struct {
		query, version string
		want           putParams
		code           string
	}{
		{"", "", putParams{0, week}, ""},
		{"visibilitytimeout=0", "", putParams{0, week}, ""},
		{"visibilitytimeout=604800", "", putParams{week, week}, ""},
		{"visibilitytimeout=30&messagettl=60", "", putParams{30 * time.Second, time.Minute}, ""},
		{"messagettl=1", "", putParams{0, time.Second}, ""},
		{"messagettl=-1", "2024-08-04", putParams{0, 0}, ""},
		{"messagettl=-1&visibilitytimeout=604800", "", putParams{week, 0}, ""},
		{"messagettl=2147483647", "2024-08-04", putParams{0, 2147483647 * time.Second}, ""},
		{"messagettl=1209600", "", putParams{0, 2 * week}, ""},
		{"visibilitytimeout=-1", "", putParams{}, "OutOfRangeQueryParameterValue"},
		{"visibilitytimeout=604801", "", putParams{}, "OutOfRangeQueryParameterValue"},
		{"visibilitytimeout=abc", "", putParams{}, "InvalidQueryParameterValue"},
		{"visibilitytimeout=", "", putParams{}, "InvalidQueryParameterValue"},
		{"messagettl=0", "", putParams{}, "OutOfRangeQueryParameterValue"},
		{"messagettl=-2", "", putParams{}, "OutOfRangeQueryParameterValue"},
		// Any positive TTL (Put Message); one too long to date never
		// expires.
		{"messagettl=2147483648", "", putParams{0, 2147483648 * time.Second}, ""},
		{"messagettl=9223372036", "", putParams{0, 9223372036 * time.Second}, ""},
		{"messagettl=9223372037", "", putParams{0, 0}, ""},
		{"messagettl=99999999999999999999", "", putParams{0, 0}, ""},
		{"messagettl=99999999999999999999&visibilitytimeout=604800", "", putParams{week, 0}, ""},
		{"messagettl=-99999999999999999999", "", putParams{}, "OutOfRangeQueryParameterValue"},
		{"messagettl=2147483648", "2016-05-31", putParams{}, "OutOfRangeQueryParameterValue"},
		{"messagettl=1.5", "", putParams{}, "InvalidQueryParameterValue"},
		{"messagettl=", "", putParams{}, "InvalidQueryParameterValue"},
		{"messagettl=10&visibilitytimeout=10", "", putParams{}, "InvalidQueryParameterValue"},
		{"messagettl=10&visibilitytimeout=11", "", putParams{}, "InvalidQueryParameterValue"},
		// Before 2017-07-29: TTL at most 7 days, no -1.
		{"messagettl=604800", "2016-05-31", putParams{0, week}, ""},
		{"messagettl=604801", "2016-05-31", putParams{}, "OutOfRangeQueryParameterValue"},
		{"messagettl=-1", "2016-05-31", putParams{}, "OutOfRangeQueryParameterValue"},
	}
	for _, tc := range tests {
		t.Run(tc.query+"@"+tc.version, func(t *testing.T) {
			got, err := parsePutParams(query(tc.query), tc.version)
			wantCode(t, err, tc.code)
			if tc.code == "" && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseGetPeekParams(t *testing.T) {
	tests := []struct {
		query  string
		n      int
		vt     time.Duration
		code   string
		peekN  int
		peekCd string
	}{
		{"", 1, 30 * time.Second, "", 1, ""},
		{"numofmessages=32&visibilitytimeout=1", 32, time.Second, "", 32, ""},
		{"visibilitytimeout=604800", 1, 604800 * time.Second, "", 1, ""},
		{"numofmessages=0", 0, 0, "OutOfRangeQueryParameterValue", 0, "OutOfRangeQueryParameterValue"},
		{"numofmessages=33", 0, 0, "OutOfRangeQueryParameterValue", 0, "OutOfRangeQueryParameterValue"},
		{"numofmessages=x", 0, 0, "InvalidQueryParameterValue", 0, "InvalidQueryParameterValue"},
		{"visibilitytimeout=0", 0, 0, "OutOfRangeQueryParameterValue", 1, ""},
		{"visibilitytimeout=604801", 0, 0, "OutOfRangeQueryParameterValue", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			n, vt, err := parseGetParams(query(tc.query))
			wantCode(t, err, tc.code)
			if tc.code == "" && (n != tc.n || vt != tc.vt) {
				t.Errorf("get: got %d, %v; want %d, %v", n, vt, tc.n, tc.vt)
			}
			pn, err := parsePeekParams(query(tc.query))
			wantCode(t, err, tc.peekCd)
			if tc.peekCd == "" && pn != tc.peekN {
				t.Errorf("peek: got %d, want %d", pn, tc.peekN)
			}
		})
	}
}

func TestParsePeekOnly(t *testing.T) {
	tests := []struct {
		query string
		want  bool
		code  string
	}{
		{"", false, ""},
		{"peekonly=true", true, ""},
		{"peekonly=TRUE", true, ""},
		{"peekonly=false", false, ""},
		{"peekonly=yes", false, "InvalidQueryParameterValue"},
		{"peekonly=", false, "InvalidQueryParameterValue"},
	}
	for _, tc := range tests {
		got, err := parsePeekOnly(query(tc.query))
		wantCode(t, err, tc.code)
		if got != tc.want {
			t.Errorf("%q: got %v", tc.query, got)
		}
	}
}

func TestParseUpdateVisibility(t *testing.T) {
	tests := []struct {
		query string
		want  time.Duration
		code  string
	}{
		{"visibilitytimeout=0", 0, ""},
		{"visibilitytimeout=604800", 604800 * time.Second, ""},
		{"", 0, "MissingRequiredQueryParameter"},
		{"visibilitytimeout=-1", 0, "OutOfRangeQueryParameterValue"},
		{"visibilitytimeout=604801", 0, "OutOfRangeQueryParameterValue"},
		{"visibilitytimeout=soon", 0, "InvalidQueryParameterValue"},
	}
	for _, tc := range tests {
		got, err := parseUpdateVisibility(query(tc.query))
		wantCode(t, err, tc.code)
		if got != tc.want {
			t.Errorf("%q: got %v, want %v", tc.query, got, tc.want)
		}
	}
}

func TestParseReceiptParam(t *testing.T) {
	r := queue.PopReceipt{ID: uuid.MustParse("0b1a9c3e-5f2d-4c6b-8a7e-9d0f1e2c3b4a"), Gen: 9}
	tests := []struct {
		query string
		code  string
	}{
		{"popreceipt=" + r.String(), ""},
		{"", "MissingRequiredQueryParameter"},
		{"popreceipt=", "InvalidQueryParameterValue"},
		{"popreceipt=AgAAAAMAAAAAAAAAYUMWAIg%2B1gE%3D", "InvalidQueryParameterValue"},
	}
	for _, tc := range tests {
		got, err := parseReceiptParam(query(tc.query))
		wantCode(t, err, tc.code)
		if tc.code == "" && got != r {
			t.Errorf("%q: got %v", tc.query, got)
		}
		if tc.code == "InvalidQueryParameterValue" {
			e, _ := azerr.As(err)
			if len(e.Details) < 3 || e.Details[2].Value != "Invalid pop receipt format" {
				t.Errorf("%q: details %v lack the reason", tc.query, e.Details)
			}
		}
	}
}

// FuzzParsePutParams: any messagettl / visibilitytimeout pair is either
// accepted with a TTL that is 0 (never) or longer than the visibility
// timeout, or refused with one of the documented 400 codes.
func FuzzParsePutParams(f *testing.F) {
	for _, s := range [][2]string{{"60", "0"}, {"-1", "30"}, {"2147483648", ""}, {"99999999999999999999", "604800"},
		{"-99999999999999999999", ""}, {"0", ""}, {"1.5", ""}, {"", "10"}, {"9223372037", "1"}, {"+5", ""}} {
		f.Add(s[0], s[1], "2024-08-04")
		f.Add(s[0], s[1], "2016-05-31")
	}
	f.Fuzz(func(t *testing.T, ttl, vt, version string) {
		q := url.Values{"messagettl": {ttl}}
		if vt != "" {
			q.Set("visibilitytimeout", vt)
		}
		p, err := parsePutParams(q, version)
		if err != nil {
			e, ok := azerr.As(err)
			if !ok || e.Status != 400 {
				t.Fatalf("%q/%q: %v", ttl, vt, err)
			}
			return
		}
		if p.TTL < 0 || p.Visibility < 0 || (p.TTL != 0 && p.TTL <= p.Visibility) {
			t.Fatalf("%q/%q: %+v", ttl, vt, p)
		}
	})
}
