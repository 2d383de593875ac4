package app

// changeFeedOn returns whether an account has the blob change feed on.
func (c Config) changeFeedOn() func(string) bool {
	if c.ChangeFeed {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range c.ChangeFeedAccounts {
		set[n] = true
	}
	return func(acct string) bool { return set[acct] }
}
