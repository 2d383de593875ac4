package filerest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// parseFileTime is how the handlers read an x-ms-file-*-time header
// ("now", "preserve" or an ISO 8601 time; def when absent) inside the
// transaction before the domain took typed inputs: the oracle
// readFileTime and FileTime.resolve are checked against.
func parseFileTime(h http.Header, name, def string, now, old time.Time) (time.Time, error) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		v = def
	}
	switch strings.ToLower(v) {
	case "now":
		return now, nil
	case "preserve":
		if old.IsZero() {
			return time.Time{}, azerr.InvalidHeader(name, v)
		}
		return old, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, azerr.InvalidHeader(name, v)
	}
	return t.UTC(), nil
}

// readFileTime and FileTime.resolve split parseFileTime in two (the header
// read before the transaction, the value resolved inside it): for every
// header value, default, current time and old time they must agree with
// it, value and error.
func checkFileTime(t *testing.T, v, def string, now, old time.Time) {
	t.Helper()
	h := http.Header{}
	if v != "" {
		h.Set("x-ms-file-creation-time", v)
	}
	want, werr := parseFileTime(h, "x-ms-file-creation-time", def, now, old)
	ft := readFileTime(h, "x-ms-file-creation-time", def)
	got, gerr := ft.Resolve(now, old)
	if (werr == nil) != (gerr == nil) || !got.Equal(want) {
		t.Fatalf("value %q default %q (old %v): got %v, %v; parseFileTime %v, %v", v, def, old, got, gerr, want, werr)
	}
	if werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("value %q: error %v, parseFileTime's %v", v, gerr, werr)
	}
}

func TestFileTimeMatchesParseFileTime(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	old := time.Date(2029, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, v := range []string{"", "now", "NOW", " preserve ", "Preserve", "2024-01-02T03:04:05.1234567Z", "2024-01-02T03:04:05+02:00", "yesterday", "2024-13-01T00:00:00Z"} {
		for _, def := range []string{"now", "preserve"} {
			checkFileTime(t, v, def, now, old)
			checkFileTime(t, v, def, now, time.Time{}) // a create: nothing to preserve
		}
	}
}

func FuzzFileTime(f *testing.F) {
	for _, v := range []string{"", "now", "preserve", "2024-01-02T03:04:05.1234567Z", "x"} {
		f.Add(v, true, int64(0))
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string, defNow bool, oldUnix int64) {
		def := "preserve"
		if defNow {
			def = "now"
		}
		old := time.Time{}
		if oldUnix != 0 {
			old = time.Unix(oldUnix%(1<<40), 0).UTC()
		}
		checkFileTime(t, v, def, now, old)
	})
}
