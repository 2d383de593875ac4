package app

import (
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/blob"
)

// TestImmutabilityAccounts: ":immutability" marks an account among the
// other marks in any order, ParseAccounts keeps its keys, the account's
// containers get version-level immutability support and no other's, and
// an account marked without versioning is refused at Start naming it.
func TestImmutabilityAccounts(t *testing.T) {
	s := "a1:" + DevKey + ":versioning:immutability;a2:" + DevKey + ":immutability:versioning;a3:" + DevKey + ":versioning;a4:" + DevKey + ":immutability"
	accts, err := ParseAccounts(s)
	if err != nil || len(accts) != 4 || len(accts[0].Keys) != 1 || len(accts[3].Keys) != 1 {
		t.Fatalf("ParseAccounts: %+v %v", accts, err)
	}
	if got := strings.Join(ImmutabilityAccounts(s), ","); got != "a1,a2,a4" {
		t.Fatalf("ImmutabilityAccounts: %s", got)
	}
	if got := strings.Join(VersioningAccounts(s), ","); got != "a1,a2,a3" {
		t.Fatalf("VersioningAccounts: %s", got)
	}
	cfg := Config{Accounts: accts, VersioningAccounts: VersioningAccounts(s), ImmutabilityAccounts: ImmutabilityAccounts(s)}
	if err := cfg.checkImmutability(); err == nil || !strings.Contains(err.Error(), "a4") {
		t.Fatalf("immutability without versioning: %v", err)
	}
	cfg.ImmutabilityAccounts = []string{"a1", "a2"}
	if err := cfg.checkImmutability(); err != nil {
		t.Fatal(err)
	}
	if on := cfg.immutabilityOn(); !on("a1") || !on("a2") || on("a3") {
		t.Fatal("immutability() per account")
	}
	cfg.DataDir = t.TempDir()
	cfg.ImmutabilityAccounts = []string{"a4"}
	if _, err := Start(cfg); err == nil || !strings.Contains(err.Error(), "a4") {
		t.Fatalf("Start with :immutability and no versioning: %v", err)
	}
}

// TestParseImmutabilityPolicy: --blob-immutability-policy's DAYS[:locked]
// within Azure's 1 to 146000 days, and its need of version-level
// immutabilityOn support.
func TestParseImmutabilityPolicy(t *testing.T) {
	for in, want := range map[string]*blob.DefaultPolicy{
		"":                nil,
		"7":               {Days: 7},
		"30:locked":       {Days: 30, Locked: true},
		"146000:Unlocked": {Days: 146000},
	} {
		got, err := ParseImmutabilityPolicy(in)
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Fatalf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "146001", "x", "7:frozen", "-1", ":locked"} {
		if _, err := ParseImmutabilityPolicy(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
	cfg := Config{ImmutabilityPolicy: &blob.DefaultPolicy{Days: 1}}
	if err := cfg.checkImmutability(); err == nil {
		t.Fatal("a default policy without version-level immutability support accepted")
	}
	cfg.BlobImmutability = true
	if err := cfg.checkImmutability(); err != nil {
		t.Fatal(err)
	}
}
