package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// delegatedQuery signs a user delegation SAS by hand in the layout of
// version sv with the key derived from accountKey, for fields the SDK of
// this module does not send (older versions, srh/srq, skdutid).
func delegatedQuery(t *testing.T, accountKey []byte, sv string, extra url.Values, sts func(k DelegationKey) string) url.Values {
	t.Helper()
	k := DelegationKey{OID: "oid-1", TID: "tid-1", Start: sasNow.Add(-time.Hour).Format(DelegationKeyTimeFormat), Expiry: sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat), Service: "b", Version: sv}
	if v := extra.Get("skdutid"); v != "" {
		k.DelegatedUserTID = v
	}
	m := hmac.New(sha256.New, DelegationKeyValue(accountKey, k))
	m.Write([]byte(sts(k)))
	q := url.Values{"sv": {sv}, "sr": {"b"}, "sp": {"r"}, "se": {sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat)},
		"skoid": {k.OID}, "sktid": {k.TID}, "skt": {k.Start}, "ske": {k.Expiry}, "sks": {"b"}, "skv": {sv},
		"sig": {base64.StdEncoding.EncodeToString(m.Sum(nil))}}
	for n, v := range extra {
		q[n] = v
	}
	return q
}

func TestDelegationSASLayouts(t *testing.T) {
	se := sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat)
	res := "/blob/" + devAccount + "/c/b"
	head := func(k DelegationKey) []string {
		return []string{"r", "", se, res, k.OID, k.TID, k.Start, k.Expiry, k.Service, k.Version}
	}
	tail := []string{"", "", "", "", ""} // rscc rscd rsce rscl rsct
	hdr := http.Header{"X-Ms-Version": {"2026-04-06"}}
	qry := url.Values{"comp": {"x"}}
	for _, tc := range []struct {
		sv    string
		extra url.Values
		sts   func(k DelegationKey) string
	}{
		{"2018-11-09", nil, func(k DelegationKey) string {
			return strings.Join(append(append(head(k), "", "", "2018-11-09", "b", ""), tail...), "\n")
		}},
		{"2020-02-10", url.Values{"saoid": {"a-oid"}, "scid": {"corr"}}, func(k DelegationKey) string {
			return strings.Join(append(append(head(k), "a-oid", "", "corr", "", "", "2020-02-10", "b", ""), tail...), "\n")
		}},
		{"2020-12-06", url.Values{"ses": {"scope"}}, func(k DelegationKey) string {
			return strings.Join(append(append(head(k), "", "", "", "", "", "2020-12-06", "b", "", "scope"), tail...), "\n")
		}},
		{"2025-07-05", url.Values{"skdutid": {"other-tenant"}}, func(k DelegationKey) string {
			return strings.Join(append(append(head(k), "", "", "", "other-tenant", "", "", "", "2025-07-05", "b", "", ""), tail...), "\n")
		}},
		{"2026-04-06", url.Values{"srh": {"x-ms-version"}, "srq": {"comp"}}, func(k DelegationKey) string {
			return strings.Join(append(append(head(k), "", "", "", "", "", "", "", "2026-04-06", "b", "", "", "x-ms-version:2026-04-06\n", "\ncomp:x"), tail...), "\n")
		}},
	} {
		t.Run(tc.sv, func(t *testing.T) {
			for _, key := range [][]byte{devKey, devKey2} {
				q := delegatedQuery(t, key, tc.sv, tc.extra, tc.sts)
				s, _, err := ParseSAS(q)
				if err != nil {
					t.Fatal(err)
				}
				r := req(Blob, "c", "b")
				r.Header, r.Query = hdr, qry
				if _, err := VerifyServiceSAS(&s, devLookup, r, nil); err != nil {
					t.Fatalf("valid token refused: %v", err)
				}
				// The same token on another blob, on Queue, or signed with
				// a key of another account fails.
				if _, err := VerifyServiceSAS(&s, devLookup, req(Blob, "c", "other"), nil); err == nil {
					t.Fatal("token valid for another blob")
				}
			}
			q := delegatedQuery(t, stranger, tc.sv, tc.extra, tc.sts)
			s, _, _ := ParseSAS(q)
			r := req(Blob, "c", "b")
			r.Header, r.Query = hdr, qry
			_, err := VerifyServiceSAS(&s, devLookup, r, nil)
			wantSASCode(t, err, azerr.AuthenticationFailed)
		})
	}
}

func TestDelegationSASRefusals(t *testing.T) {
	sts := func(sv string) func(k DelegationKey) string {
		return func(k DelegationKey) string { return "" }
	}
	base := delegatedQuery(t, devKey, "2020-12-06", nil, sts("2020-12-06"))
	for name, mutate := range map[string]func(q url.Values){
		"stored policy": func(q url.Values) { q.Set("si", "p") },
		"key expired":   func(q url.Values) { q.Set("ske", sasNow.Add(-time.Minute).Format(DelegationKeyTimeFormat)) },
		"key not yet":   func(q url.Values) { q.Set("skt", sasNow.Add(time.Minute).Format(DelegationKeyTimeFormat)) },
		"queue key":     func(q url.Values) { q.Set("sks", "q") },
		"delegated oid": func(q url.Values) { q.Set("sduoid", "someone") },
	} {
		q := url.Values{}
		for k, v := range base {
			q[k] = append([]string(nil), v...)
		}
		mutate(q)
		s, _, err := ParseSAS(q)
		if err == nil {
			_, err = VerifyServiceSAS(&s, devLookup, req(Blob, "c", "b"), nil)
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		wantSASCode(t, err, azerr.AuthenticationFailed)
	}
	// A Blob delegation SAS (sks b) on Queue is refused.
	s, _, _ := ParseSAS(base)
	_, err := VerifyServiceSAS(&s, devLookup, req(Queue, "c", ""), nil)
	wantSASCode(t, err, azerr.AuthenticationFailed)
}

// TestDelegationSASDelegatedUser: a SAS bound to a user (sduoid, signed
// from 2025-07-05) is valid with a bearer token of that user (its oid, and
// its tid when the key names the delegated user's tenant, skdutid), and
// 403 AuthenticationFailed without a token or with another user's. Before
// the bearer token was passed along, every such SAS was refused.
func TestDelegationSASDelegatedUser(t *testing.T) {
	res := "/blob/" + devAccount + "/c/b"
	se := sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat)
	sign := func(tid string) url.Values {
		extra := url.Values{"sduoid": {"user-1"}}
		if tid != "" {
			extra.Set("skdutid", tid)
		}
		return delegatedQuery(t, devKey, "2025-07-05", extra, func(k DelegationKey) string {
			return strings.Join([]string{"r", "", se, res, k.OID, k.TID, k.Start, k.Expiry, k.Service, k.Version,
				"", "", "", tid, "user-1", "", "", "2025-07-05", "b", "", "", "", "", "", "", ""}, "\n")
		})
	}
	for _, tc := range []struct {
		tid    string
		bearer *Principal
		ok     bool
	}{
		{"", &Principal{OID: "user-1", TID: "tid-1"}, true},
		{"", nil, false},
		{"", &Principal{OID: "user-2", TID: "tid-1"}, false},
		{"", &Principal{OID: ""}, false},
		{"tenant-x", &Principal{OID: "user-1", TID: "tenant-x"}, true},
		{"tenant-x", &Principal{OID: "user-1", TID: "tid-1"}, false},
	} {
		s, _, err := ParseSAS(sign(tc.tid))
		if err != nil {
			t.Fatal(err)
		}
		if s.DelegatedUserOID() != "user-1" {
			t.Fatalf("DelegatedUserOID %q", s.DelegatedUserOID())
		}
		r := req(Blob, "c", "b")
		r.Bearer = tc.bearer
		_, err = VerifyServiceSAS(&s, devLookup, r, nil)
		if tc.ok {
			if err != nil {
				t.Errorf("skdutid %q bearer %+v: refused: %v", tc.tid, tc.bearer, err)
			}
			continue
		}
		wantSASCode(t, err, azerr.AuthenticationFailed)
	}
	// The bearer token does not make a bad signature good.
	q := sign("")
	q.Set("sduoid", "user-2")
	s, _, _ := ParseSAS(q)
	r := req(Blob, "c", "b")
	r.Bearer = &Principal{OID: "user-2"}
	_, err := VerifyServiceSAS(&s, devLookup, r, nil)
	wantSASCode(t, err, azerr.AuthenticationFailed)
}

// TestQueueDelegationSASLayout: a queue user delegation SAS (from sv
// 2026-02-06) verifies in the layout .NET's QueueSasBuilder and Java's
// QueueSasImplUtil sign (sp st se res skoid sktid skt ske sks skv skdutid
// sduoid sip spr sv), under a key for sks q, for its queue only; with sr,
// before sv 2026-02-06 or in the Shared Key queue layout it is 403
// AuthenticationFailed (AuthorizationResourceTypeMismatch for sr). Before
// Queue took delegation SAS, every one was refused.
func TestQueueDelegationSASLayout(t *testing.T) {
	se := sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat)
	sign := func(sv, sks string, sts func(k DelegationKey) string) url.Values {
		k := DelegationKey{OID: "oid-1", TID: "tid-1", Start: sasNow.Add(-time.Hour).Format(DelegationKeyTimeFormat), Expiry: sasNow.Add(time.Hour).Format(DelegationKeyTimeFormat), Service: sks, Version: sv}
		m := hmac.New(sha256.New, DelegationKeyValue(devKey, k))
		m.Write([]byte(sts(k)))
		return url.Values{"sv": {sv}, "sp": {"rp"}, "se": {se}, "skoid": {k.OID}, "sktid": {k.TID}, "skt": {k.Start}, "ske": {k.Expiry}, "sks": {sks}, "skv": {sv},
			"sig": {base64.StdEncoding.EncodeToString(m.Sum(nil))}}
	}
	layout := func(sv string) func(k DelegationKey) string {
		return func(k DelegationKey) string {
			return strings.Join([]string{"rp", "", se, "/queue/" + devAccount + "/q1", k.OID, k.TID, k.Start, k.Expiry, k.Service, k.Version, "", "", "", "", sv}, "\n")
		}
	}
	verify := func(q url.Values, queue string) error {
		s, _, err := ParseSAS(q)
		if err != nil {
			return err
		}
		_, err = VerifyServiceSAS(&s, devLookup, req(Queue, queue, ""), nil)
		return err
	}
	good := sign("2026-02-06", "q", layout("2026-02-06"))
	if err := verify(good, "q1"); err != nil {
		t.Fatalf("valid token refused: %v", err)
	}
	wantSASCode(t, verify(good, "q2"), azerr.AuthenticationFailed)
	withSR := url.Values{}
	for k, v := range good {
		withSR[k] = v
	}
	withSR.Set("sr", "q")
	if err := verify(withSR, "q1"); err == nil {
		t.Fatal("sr accepted")
	}
	wantSASCode(t, verify(sign("2025-11-05", "q", layout("2025-11-05")), "q1"), azerr.AuthenticationFailed)
	wantSASCode(t, verify(sign("2026-02-06", "b", layout("2026-02-06")), "q1"), azerr.AuthenticationFailed)
	sharedKeyLayout := func(k DelegationKey) string {
		return strings.Join([]string{"rp", "", se, "/queue/" + devAccount + "/q1", "", "", "", "2026-02-06"}, "\n")
	}
	wantSASCode(t, verify(sign("2026-02-06", "q", sharedKeyLayout), "q1"), azerr.AuthenticationFailed)
}
