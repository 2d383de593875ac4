package auth

import "testing"

// TestRawQueryHasSig: a sig parameter is found however it is written,
// including the forms url.ParseQuery drops (a bad escape, a ';').
func TestRawQueryHasSig(t *testing.T) {
	for raw, want := range map[string]bool{
		"sv=2020-02-10&sig=%zz":       true,
		"sig=abc;def":                 true,
		"a=1;sig=x":                   true,
		"%73ig=abc":                   true,
		"sig":                         true,
		"sv=1&signature=x&sigx=1":     false,
		"":                            false,
		"comp=list&restype=container": false,
	} {
		if got := RawQueryHasSig(raw); got != want {
			t.Errorf("RawQueryHasSig(%q) = %v, want %v", raw, got, want)
		}
	}
}
