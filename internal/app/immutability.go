package app

import "fmt"

// immutabilityMark, as a last field of an account in ParseAccounts'
// syntax (marks in any order), gives every container of the account
// version-level immutability support, as enabling it on a storage account
// does on Azure ("Configure immutability policies for blob versions").
// It needs the account's blob versioning, which Azure requires for it.
const immutabilityMark = "immutability"

// ImmutabilityAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a trailing field "immutability".
func ImmutabilityAccounts(s string) []string { return markedAccounts(s, immutabilityMark) }

// immutability returns whether an account's containers support
// version-level immutability.
func (c Config) immutability() func(string) bool {
	if c.BlobImmutability {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range c.ImmutabilityAccounts {
		set[n] = true
	}
	return func(acct string) bool { return set[acct] }
}

// checkImmutability refuses an account marked :immutability without
// blob versioning: version-level immutability keeps policies on versions,
// and Azure enables it only with versioning.
func (c Config) checkImmutability() error {
	ver := c.versioning()
	for _, n := range c.ImmutabilityAccounts {
		if !ver(n) {
			return fmt.Errorf("account %s: :immutability needs blob versioning on that account (:versioning, or --blob-versioning)", n)
		}
	}
	return nil
}
