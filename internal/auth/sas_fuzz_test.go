package auth

import (
	"net/url"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// FuzzParseSAS: ParseSAS, the verifiers and Authorize never panic on any
// query, and every failure is a 403 *azerr.Error.
func FuzzParseSAS(f *testing.F) {
	for _, c := range sdkSASCases(f) {
		f.Add(c.query)
	}
	for _, s := range []string{"", "sig=", "sig=%", "sv=2021-08-06&sig=x&sip=1.2.3.4-", "sr=d&sdd=99999999999999999999&sig=a",
		"sip=::1-::2&sv=2021-08-06&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D", "sv=2021-08-06&sr=d&sdd=3&sp=r&se=2026-01-02&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		s, ok, err := ParseSAS(q)
		if !ok {
			if err != nil {
				t.Fatalf("ok=false with error %v", err)
			}
			return
		}
		if err != nil {
			if e, isAz := azerr.As(err); !isAz || e.Status != 403 {
				t.Fatalf("ParseSAS error %v", err)
			}
			return
		}
		for _, svc := range []Service{Blob, Queue, Table, File} {
			for _, r := range []SASRequest{req(svc, "c1", "a/b"), req(svc, "", ""), req(svc, "mytable", "")} {
				eff, err := VerifySAS(&s, devLookup, r, func(string) (AccessPolicy, bool) { return AccessPolicy{Permissions: "r"}, true })
				if err != nil {
					if e, isAz := azerr.As(err); !isAz || e.Status != 403 {
						t.Fatalf("VerifySAS error %v", err)
					}
				}
				for _, rt := range []ResourceType{ServiceLevel, ContainerLevel, ObjectLevel} {
					if err := Authorize(&eff, svc, Operation{rt, "r"}); err != nil {
						if e, isAz := azerr.As(err); !isAz || e.Status != 403 {
							t.Fatalf("Authorize error %v", err)
						}
					}
				}
				_ = s.AllowsEntity("a", "b")
			}
		}
	})
}
