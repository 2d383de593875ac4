package app

import (
	"fmt"
	"strings"
)

// versioningMark, as a last field of an account in ParseAccounts' syntax
// (before or after the hns mark), turns blob versioning on for the
// account, as Azure's account setting IsVersioningEnabled does. Like
// hnsMark it is no base64 key.
const versioningMark = "versioning"

// accountMarks are the fields that may end an account in ParseAccounts'
// syntax after its keys.
var accountMarks = map[string]bool{hnsMark: true, versioningMark: true}

// trimMarks drops the trailing marks of an account's fields (its name
// and keys stay; a lone mark after the name is left for the caller to
// refuse as a key).
func trimMarks(fields []string) []string {
	for len(fields) >= 3 && accountMarks[fields[len(fields)-1]] {
		fields = fields[:len(fields)-1]
	}
	return fields
}

// hasMark reports whether the account item (ParseAccounts' syntax) ends
// with mark among its trailing marks.
func hasMark(item, mark string) bool {
	fields := strings.Split(strings.TrimSpace(item), ":")
	for len(fields) >= 3 && accountMarks[fields[len(fields)-1]] {
		if fields[len(fields)-1] == mark {
			return true
		}
		fields = fields[:len(fields)-1]
	}
	return false
}

// VersioningAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a trailing field "versioning".
func VersioningAccounts(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ";") {
		if hasMark(item, versioningMark) {
			out = append(out, strings.Split(strings.TrimSpace(item), ":")[0])
		}
	}
	return out
}

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
