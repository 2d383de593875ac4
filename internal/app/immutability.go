package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/blob"
)

// maxPolicyDays is the longest retention period Azure takes (146,000
// days, ARM's immutabilityPeriodSinceCreationInDays).
const maxPolicyDays = 146000

// ParseImmutabilityPolicy reads --blob-immutability-policy: DAYS or
// DAYS:locked (or DAYS:unlocked); "" is none.
func ParseImmutabilityPolicy(s string) (*blob.DefaultPolicy, error) {
	if s == "" {
		return nil, nil
	}
	days, state, _ := strings.Cut(s, ":")
	n, err := strconv.Atoi(days)
	if err != nil || n < 1 || n > maxPolicyDays {
		return nil, fmt.Errorf("%q: want DAYS[:locked], 1 to %d days", s, maxPolicyDays)
	}
	p := &blob.DefaultPolicy{Days: n}
	switch strings.ToLower(state) {
	case "", "unlocked":
	case "locked":
		p.Locked = true
	default:
		return nil, fmt.Errorf("%q: the state after the days is locked or unlocked", s)
	}
	return p, nil
}

// immutabilityOn returns whether an account's containers support
// version-level immutability.
func (c Config) immutabilityOn() func(string) bool {
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
	if c.ImmutabilityPolicy != nil && !c.BlobImmutability && len(c.ImmutabilityAccounts) == 0 {
		return fmt.Errorf("--blob-immutability-policy needs version-level immutability support (--blob-immutability, or an account marked :immutability)")
	}
	ver := c.versioningOn()
	for _, n := range c.ImmutabilityAccounts {
		if !ver(n) {
			return fmt.Errorf("account %s: :immutability needs blob versioning on that account (:versioning, or --blob-versioning)", n)
		}
	}
	return nil
}
