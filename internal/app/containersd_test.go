package app

import (
	"testing"
)

// TestContainerSoftDeleteConfig: container soft delete is refused at
// Start outside 0 to 365 days; flat and hierarchical accounts take it.
func TestContainerSoftDeleteConfig(t *testing.T) {
	s := "a1:" + DevKey + ";a2:" + DevKey + ":hns"
	accts, err := ParseAccounts(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Accounts: accts, HierarchicalAccounts: HierarchicalAccounts(s), ContainerSoftDelete: 7}
	if err := cfg.checkContainerSoftDelete(); err != nil {
		t.Fatalf("container soft delete with a hierarchical account: %v", err)
	}
	cfg.ContainerSoftDelete = 0
	if err := cfg.checkContainerSoftDelete(); err != nil {
		t.Fatalf("off: %v", err)
	}
	cfg = Config{Accounts: accts[:1], ContainerSoftDelete: 365}
	if err := cfg.checkContainerSoftDelete(); err != nil {
		t.Fatal(err)
	}
	cfg.ContainerSoftDelete = 366
	if err := cfg.checkContainerSoftDelete(); err == nil {
		t.Fatal("366 days accepted")
	}
	cfg.ContainerSoftDelete = -1
	if err := cfg.checkContainerSoftDelete(); err == nil {
		t.Fatal("-1 days accepted")
	}
	cfg = Config{ContainerSoftDelete: 1, HierarchicalNamespace: true}
	if err := cfg.checkContainerSoftDelete(); err != nil {
		t.Fatalf("--container-soft-delete with --hierarchical-namespace: %v", err)
	}
}
