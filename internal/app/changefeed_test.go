package app

import (
	"strings"
	"testing"
)

// TestChangeFeedAccounts: :changefeed marks an account in --accounts,
// before or after :hns, without being taken for a key; the marks are
// independent; every account has the feed with Config.ChangeFeed.
func TestChangeFeedAccounts(t *testing.T) {
	spec := "a1:" + DevKey + ":changefeed;a2:" + DevKey + ":" + DevKey + ":hns:changefeed;a3:" + DevKey + ":changefeed:hns;a4:" + DevKey + ":hns"
	accts, err := ParseAccounts(spec)
	if err != nil || len(accts) != 4 || len(accts[1].Keys) != 2 || len(accts[0].Keys) != 1 {
		t.Fatalf("ParseAccounts: %+v %v", accts, err)
	}
	if got := strings.Join(ChangeFeedAccounts(spec), ","); got != "a1,a2,a3" {
		t.Fatalf("ChangeFeedAccounts = %s", got)
	}
	if got := strings.Join(HierarchicalAccounts(spec), ","); got != "a2,a3,a4" {
		t.Fatalf("HierarchicalAccounts = %s", got)
	}
	for _, bad := range []string{"a:changefeed", "a:" + DevKey + ":changefeed:changefeed", "a:" + DevKey + ":" + DevKey + ":" + DevKey + ":changefeed"} {
		if _, err := ParseAccounts(bad); err == nil {
			t.Errorf("ParseAccounts(%q) accepted", bad)
		}
	}
	on := Config{ChangeFeedAccounts: []string{"a1"}}.changeFeedOn()
	if !on("a1") || on("a2") {
		t.Fatal("ChangeFeedAccounts: wrong accounts on")
	}
	if !(Config{ChangeFeed: true}).changeFeedOn()("any") {
		t.Fatal("ChangeFeed: not on for every account")
	}
}
