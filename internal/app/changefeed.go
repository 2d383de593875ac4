package app

import "strings"

// changeFeedMark, as a last field of an account in ParseAccounts'
// syntax (before or after hnsMark), turns the account's blob change feed
// on, as the account setting does on Azure. It is no base64 key (its
// length is not a multiple of four).
const changeFeedMark = "changefeed"

// accountMarks strips the marks (hnsMark, changeFeedMark, versioningMark,
// immutabilityMark) that end the
// fields of one account in ParseAccounts' syntax and returns the fields
// left and the marks found. Marks follow at least a name and a key.
func accountMarks(fields []string) ([]string, map[string]bool) {
	marks := map[string]bool{}
	for len(fields) >= 3 {
		last := fields[len(fields)-1]
		if (last != hnsMark && last != changeFeedMark && last != versioningMark && last != immutabilityMark) || marks[last] {
			break
		}
		marks[last] = true
		fields = fields[:len(fields)-1]
	}
	return fields, marks
}

// markedAccounts returns the accounts of s (ParseAccounts' syntax)
// carrying mark.
func markedAccounts(s, mark string) []string {
	var out []string
	for _, item := range strings.Split(s, ";") {
		fields, marks := accountMarks(strings.Split(strings.TrimSpace(item), ":"))
		if marks[mark] {
			out = append(out, fields[0])
		}
	}
	return out
}

// ChangeFeedAccounts returns the accounts of s (ParseAccounts' syntax)
// marked with a field "changefeed".
func ChangeFeedAccounts(s string) []string { return markedAccounts(s, changeFeedMark) }

// changeFeed returns whether an account has the blob change feed on.
func (c Config) changeFeed() func(string) bool {
	if c.ChangeFeed {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range c.ChangeFeedAccounts {
		set[n] = true
	}
	return func(acct string) bool { return set[acct] }
}
