package app

import "fmt"

// versioningOn returns whether blob versioning is on for an account.
func (c Config) versioningOn() func(string) bool {
	if c.BlobVersioning {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range c.VersioningAccounts {
		set[n] = true
	}
	return func(acct string) bool { return set[acct] }
}

// checkVersioning refuses versioning on a hierarchical account: Cerulean
// keeps versions of flat accounts' blobs only (a Data Lake path has no
// versions here).
func (c Config) checkVersioning() error {
	hier, ver := c.hierarchical(), c.versioningOn()
	names := append([]string{}, c.VersioningAccounts...)
	if c.BlobVersioning {
		for _, a := range c.Accounts {
			names = append(names, a.Name)
		}
		if len(c.Accounts) == 0 {
			names = append(names, DevAccount)
		}
	}
	for _, n := range names {
		if ver(n) && hier(n) {
			return fmt.Errorf("account %s: blob versioning is not supported on an account with a hierarchical namespace; serve it without --blob-versioning (or :versioning), or without a hierarchical namespace", n)
		}
	}
	return nil
}
