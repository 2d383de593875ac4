package datalake

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// FuzzParseLeaseAction: any combination of append's and flush's lease
// headers is either a consistent lease action or a 400.
func FuzzParseLeaseAction(f *testing.F) {
	const id = "c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11"
	for _, c := range [][4]string{{"acquire", "", id, "15"}, {"acquire-release", "", id, "-1"}, {"auto-renew", id, "", ""},
		{"release", id, "", ""}, {"", id, "", ""}, {"acquire", "", "", "15"}, {"acquire", "", id, "14"}, {"renew", id, "", ""}, {"release", "x", "", ""}} {
		f.Add(c[0], c[1], c[2], c[3])
	}
	f.Fuzz(func(t *testing.T, action, leaseID, proposed, duration string) {
		h := http.Header{}
		h.Set("x-ms-lease-action", action)
		h.Set("x-ms-lease-id", leaseID)
		h.Set("x-ms-proposed-lease-id", proposed)
		h.Set("x-ms-lease-duration", duration)
		a, err := parseLeaseAction(h)
		if err != nil {
			var e *azerr.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%v", err)
			}
			return
		}
		switch a.Action {
		case blob.PathLeaseAcquire, blob.PathLeaseAcquireRelease:
			if a.Duration == nil || a.ProposedID == "" {
				t.Fatalf("acquire without duration or proposed id: %+v", a)
			}
			if d := *a.Duration; d != -1 && (d < 15 || d > 60) {
				t.Fatalf("duration %d", d)
			}
		case blob.PathLeaseAutoRenew, blob.PathLeaseRelease:
			if a.LeaseID == "" {
				t.Fatalf("%s without a lease id", a.Action)
			}
		case "":
		default:
			t.Fatalf("action %q accepted", a.Action)
		}
	})
}

// FuzzParsePosition: the position parameter is a non-negative integer
// or a 400.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"position=0", "position=123", "position=-1", "position=", "", "position=1e3", "position=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		r := &req{Request: &server.Request{}, q: v}
		n, err := parsePosition(r)
		if err != nil {
			var e *azerr.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%v", err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("position %d from %q", n, q)
		}
	})
}

// FuzzParseCreateLease: Path Create's lease headers are both absent, a
// valid acquire request, or a 400.
func FuzzParseCreateLease(f *testing.F) {
	for _, c := range [][2]string{{"", ""}, {"c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11", "15"}, {"c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11", "-1"},
		{"", "15"}, {"x", "15"}, {"c3b5a0e2-6a43-4d2f-9a51-0c7f6f0d1a11", "61"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, id, dur string) {
		h := http.Header{}
		h.Set("x-ms-proposed-lease-id", id)
		h.Set("x-ms-lease-duration", dur)
		req, err := parseCreateLease(h)
		if err != nil {
			var e *azerr.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("%v", err)
			}
			return
		}
		if req == nil {
			return
		}
		if req.ProposedID == "" || req.Duration == nil || (*req.Duration != -1 && (*req.Duration < 15 || *req.Duration > 60)) {
			t.Fatalf("accepted %+v from %q %q", req, id, dur)
		}
	})
}
