package datalake

import (
	"net/http"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		opt, val string
		want     time.Time
		set      bool
	}{
		{"", "", time.Time{}, false},
		{"NeverExpire", "", time.Time{}, true},
		{"RelativeToNow", "1500", now.Add(1500 * time.Millisecond), true},
		{"relativetonow", "0", now, true},
		{"Absolute", "Sat, 03 Jan 2026 00:00:00 GMT", time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), true},
	} {
		got, set, err := parseExpiry(c.opt, c.val, now)
		if err != nil || set != c.set || !got.Equal(c.want) {
			t.Errorf("%q %q: %v %v %v", c.opt, c.val, got, set, err)
		}
	}
	for _, c := range [][2]string{{"", "100"}, {"NeverExpire", "5"}, {"RelativeToNow", "-1"}, {"RelativeToNow", "x"}, {"Absolute", "tomorrow"}, {"RelativeToCreation", "5"}, {"Later", ""}} {
		if _, _, err := parseExpiry(c[0], c[1], now); err == nil {
			t.Errorf("%q %q accepted", c[0], c[1])
		} else if e, ok := azerr.As(err); !ok || e.Status != http.StatusBadRequest {
			t.Errorf("%q %q: %v", c[0], c[1], err)
		}
	}
}

func TestParseRenameSource(t *testing.T) {
	for _, c := range []struct {
		v, acct  string
		first    bool
		fs, path string
	}{
		{"/fs/a/b", "acct", false, "fs", "a/b"},
		{"/fs/a%20b/c?sv=x&sig=y", "acct", false, "fs", "a b/c"},
		{"/acct/fs/a", "acct", true, "fs", "a"},
		{"/acct/fs/a", "acct", false, "acct", "fs/a"},
		{"/fs/d/", "acct", true, "fs", "d"},
	} {
		fs, p, err := parseRenameSource(c.v, c.acct, c.first)
		if err != nil || fs != c.fs || p != c.path {
			t.Errorf("%q: %q %q %v", c.v, fs, p, err)
		}
	}
	for _, bad := range []string{"", "fs/a", "/fs", "/fs/", "/", "/fs/%zz"} {
		if _, _, err := parseRenameSource(bad, "acct", false); !azerr.Has(err, azerr.InvalidHeaderValue) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzParseExpiry: any option and time either fail with a 400 or give
// an expiry that is set, from a known option.
func FuzzParseExpiry(f *testing.F) {
	for _, s := range [][2]string{{"RelativeToNow", "1000"}, {"Absolute", "Sat, 03 Jan 2026 00:00:00 GMT"}, {"NeverExpire", ""}, {"", ""}, {"x", "y"}} {
		f.Add(s[0], s[1])
	}
	now := time.Unix(1700000000, 0).UTC()
	f.Fuzz(func(t *testing.T, opt, val string) {
		got, set, err := parseExpiry(opt, val, now)
		if err != nil {
			if e, ok := azerr.As(err); !ok || e.Status != http.StatusBadRequest {
				t.Fatalf("%q %q: %v", opt, val, err)
			}
			return
		}
		if set == (opt == "") || (!got.IsZero() && got.Before(now) && opt != "Absolute" && opt != "absolute") {
			t.Fatalf("%q %q: %v %v", opt, val, got, set)
		}
	})
}

// FuzzParseRenameSource: any header value either fails with 400
// InvalidHeaderValue or names a filesystem and a non-empty path without
// leading or trailing slashes.
func FuzzParseRenameSource(f *testing.F) {
	for _, s := range []string{"/fs/a", "/acct/fs/a/b?sig=x", "/fs/", "%2F"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, first bool) {
		fs, p, err := parseRenameSource(v, "acct", first)
		if err != nil {
			if !azerr.Has(err, azerr.InvalidHeaderValue) {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		if fs == "" || p == "" || p[0] == '/' || p[len(p)-1] == '/' {
			t.Fatalf("%q: %q %q", v, fs, p)
		}
	})
}
