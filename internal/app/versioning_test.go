package app

import (
	"strings"
	"testing"
)

// TestVersioningAccounts: ":versioning" marks an account, before or after
// ":hns", and ParseAccounts keeps its keys; versioning on a hierarchical
// account is refused at Start with a message naming it.
func TestVersioningAccounts(t *testing.T) {
	s := "a1:" + DevKey + ":versioning;a2:" + DevKey + ":" + DevKey + ":hns:versioning;a3:" + DevKey + ":versioning:hns;a4:" + DevKey
	accts, err := ParseAccounts(s)
	if err != nil || len(accts) != 4 || len(accts[1].Keys) != 2 || len(accts[2].Keys) != 1 {
		t.Fatalf("ParseAccounts: %+v %v", accts, err)
	}
	if got := strings.Join(VersioningAccounts(s), ","); got != "a1,a2,a3" {
		t.Fatalf("VersioningAccounts: %s", got)
	}
	if got := strings.Join(HierarchicalAccounts(s), ","); got != "a2,a3" {
		t.Fatalf("HierarchicalAccounts: %s", got)
	}
	if _, err := ParseAccounts("a1:versioning"); err == nil {
		t.Fatal("a lone mark is no key")
	}
	cfg := Config{Accounts: accts, VersioningAccounts: VersioningAccounts(s), HierarchicalAccounts: HierarchicalAccounts(s)}
	if err := cfg.checkVersioning(); err == nil || !strings.Contains(err.Error(), "a2") {
		t.Fatalf("versioning on a hierarchical account: %v", err)
	}
	cfg = Config{Accounts: accts[:1], VersioningAccounts: []string{"a1"}}
	if err := cfg.checkVersioning(); err != nil {
		t.Fatal(err)
	}
	if on := cfg.versioningOn(); !on("a1") || on("a4") {
		t.Fatal("versioning() per account")
	}
	cfg = Config{BlobVersioning: true, HierarchicalNamespace: true}
	if err := cfg.checkVersioning(); err == nil {
		t.Fatal("--blob-versioning with --hierarchical-namespace accepted")
	}
}
