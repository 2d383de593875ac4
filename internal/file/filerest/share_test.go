package filerest

import (
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParseShareOptions(t *testing.T) {
	for _, tc := range []struct {
		name, header, value string
		create              bool
		bad                 bool
		check               func(shareOptions) bool
	}{
		{"quota min", "x-ms-share-quota", "1", true, false, func(o shareOptions) bool { return *o.quota == 1 }},
		{"quota max", "x-ms-share-quota", "102400", true, false, func(o shareOptions) bool { return *o.quota == 102400 }},
		{"quota zero", "x-ms-share-quota", "0", true, true, nil},
		{"quota negative", "x-ms-share-quota", "-1", false, true, nil},
		{"quota too large", "x-ms-share-quota", "102401", false, true, nil},
		{"quota not a number", "x-ms-share-quota", "5 GiB", true, true, nil},
		{"tier any case", "x-ms-access-tier", "cool", true, false, func(o shareOptions) bool { return o.tier == "Cool" }},
		{"tier transaction optimized", "x-ms-access-tier", "TransactionOptimized", false, false, func(o shareOptions) bool { return o.tier == "TransactionOptimized" }},
		{"tier unknown", "x-ms-access-tier", "Archive", true, true, nil},
		{"protocol nfs", "x-ms-enabled-protocols", "nfs", true, false, func(o shareOptions) bool { return o.protocols == "NFS" }},
		{"protocol both", "x-ms-enabled-protocols", "SMB,NFS", true, true, nil},
		{"protocol ignored on set", "x-ms-enabled-protocols", "bogus", false, false, func(o shareOptions) bool { return o.protocols == "" }},
		{"root squash", "x-ms-root-squash", "allsquash", true, false, func(o shareOptions) bool { return o.squash == "AllSquash" }},
		{"root squash unknown", "x-ms-root-squash", "Squash", true, true, nil},
		{"dir lease false", "x-ms-enable-smb-directory-lease", "false", true, false, func(o shareOptions) bool { return o.dirLease != nil && !*o.dirLease }},
		{"dir lease bad", "x-ms-enable-smb-directory-lease", "maybe", true, true, nil},
		{"snapshot dir", "x-ms-enable-snapshot-virtual-directory-access", "true", false, false, func(o shareOptions) bool { return o.snapVDir != nil && *o.snapVDir }},
	} {
		h := http.Header{}
		h.Set(tc.header, tc.value)
		o, err := parseShareOptions(h, tc.create)
		if tc.bad {
			e, ok := azerr.As(err)
			if !ok || e.Code != azerr.InvalidHeaderValue {
				t.Errorf("%s: got %v, want InvalidHeaderValue", tc.name, err)
			}
			continue
		}
		if err != nil || !tc.check(o) {
			t.Errorf("%s: got %+v, %v", tc.name, o, err)
		}
	}
}
