package wire

import (
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// checkErr asserts that err is nil when code is "", and otherwise an
// *azerr.Error with that code and the catalog status.
func checkErr(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	e, ok := azerr.As(err)
	if !ok {
		t.Fatalf("error = %v, want *azerr.Error %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s, want %s (%v)", e.Code, code, err)
	}
	if e.Status != azerr.Status(code) {
		t.Fatalf("status = %d, want %d", e.Status, azerr.Status(code))
	}
}

func detail(e *azerr.Error, name string) (string, bool) {
	for _, d := range e.Details {
		if d.Name == name {
			return d.Value, true
		}
	}
	return "", false
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}
