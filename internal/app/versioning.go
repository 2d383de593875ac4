package app

import "fmt"

// VersioningAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a trailing field "versioning".
func VersioningAccounts(s string) []string { return markedAccounts(s, versioningMark) }

// versioning returns whether blob versioning is on for an account.
func (c Config) versioning() func(string) bool {
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
	hier, ver := c.hierarchical(), c.versioning()
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
