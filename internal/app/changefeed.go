package app

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
