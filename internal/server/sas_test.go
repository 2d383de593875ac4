package server

import (
	"errors"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/policy"
)

func TestCheckSASRule(t *testing.T) {
	svcSAS := func(sp string) *auth.SAS { return &auth.SAS{Permissions: sp, TableName: "t"} }
	acct := &auth.SAS{Services: "t", ResourceTypes: "sco", Permissions: "l"}
	svcSASv := func(sp, sv string) *auth.SAS { return &auth.SAS{Permissions: sp, TableName: "t", Version: sv} }
	breakRule := SASRule{Resource: auth.ObjectLevel, AnyOf: "w", SinceAnyOf: "d", Since: "2017-07-29"}
	cases := []struct {
		name string
		sas  *auth.SAS
		rule SASRule
		code string // "" for success
	}{
		{"any-of hit", svcSAS("r"), SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}, ""},
		{"any-of miss", svcSAS("a"), SASRule{Resource: auth.ObjectLevel, AnyOf: "r"}, azerr.AuthorizationPermissionMismatch},
		{"all-of both", svcSAS("au"), SASRule{Resource: auth.ObjectLevel, AnyOf: "a", AllOf: "u"}, ""},
		{"all-of missing u", svcSAS("a"), SASRule{Resource: auth.ObjectLevel, AnyOf: "a", AllOf: "u"}, azerr.AuthorizationPermissionMismatch},
		{"all-of missing a", svcSAS("u"), SASRule{Resource: auth.ObjectLevel, AnyOf: "a", AllOf: "u"}, azerr.AuthorizationPermissionMismatch},
		{"account only, service SAS", svcSAS("c"), SASRule{Resource: auth.ContainerLevel, AnyOf: "c", AccountOnly: true}, azerr.AuthorizationResourceTypeMismatch},
		{"account only, account SAS", acct, SASRule{Resource: auth.ServiceLevel, AnyOf: "l", AccountOnly: true}, ""},
		// Delete breaks a lease from sv 2017-07-29.
		{"since, old version", svcSASv("d", "2017-04-17"), breakRule, azerr.AuthorizationPermissionMismatch},
		{"since, the version", svcSASv("d", "2017-07-29"), breakRule, ""},
		{"since, later version", svcSASv("d", "2025-01-05"), breakRule, ""},
		{"since, w at old version", svcSASv("w", "2015-04-05"), breakRule, ""},
		{"since, neither", svcSASv("r", "2025-01-05"), breakRule, azerr.AuthorizationPermissionMismatch},
		// Only an account SAS's letters grant it.
		{"account permission, service SAS", svcSAS("d"), SASRule{Resource: auth.ObjectLevel, AnyOf: "d", AccountPermission: true}, azerr.AuthorizationPermissionMismatch},
		{"account permission, account SAS", &auth.SAS{Services: "t", ResourceTypes: "o", Permissions: "d"}, SASRule{Resource: auth.ObjectLevel, AnyOf: "d", AccountPermission: true}, ""},
	}
	for _, c := range cases {
		err := CheckSASRule(c.sas, auth.Table, c.rule)
		var ae *azerr.Error
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!errors.As(err, &ae) || ae.Code != c.code):
			t.Errorf("%s: want %s, got %v", c.name, c.code, err)
		}
	}
}

func TestPolicies(t *testing.T) {
	load := func() ([]policy.Stored, error) {
		return []policy.Stored{
			{ID: "a", Start: "2026-01-02T03:04:05.0000000Z", Expiry: "2026-02-02T03:04:05Z", Permission: "rw"},
			{ID: "b"},
			{ID: "bad", Expiry: "tomorrow"},
		}, nil
	}
	look := Policies(load)
	p, ok := look("a")
	if !ok || p.Permissions != "rw" || !p.Start.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || !p.Expiry.Equal(time.Date(2026, 2, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("a: %+v %v", p, ok)
	}
	if p, ok := look("b"); !ok || !p.Start.IsZero() || !p.Expiry.IsZero() || p.Permissions != "" {
		t.Fatalf("b: %+v %v", p, ok)
	}
	if _, ok := look("bad"); ok {
		t.Fatal("an unparsable policy resolved")
	}
	if _, ok := look("none"); ok {
		t.Fatal("a missing policy resolved")
	}
	if _, ok := Policies(func() ([]policy.Stored, error) { return nil, errors.New("x") })("a"); ok {
		t.Fatal("a failed load resolved")
	}
}
