package acl

import (
	"fmt"
	"strings"
	"testing"
)

// namedACL is an access ACL with n named users after the owning user,
// owning group, mask and other entries, and, with def, a default ACL of
// the same shape: n = MaxEntries-4 is the largest ACL Azure accepts.
func namedACL(n int, def bool) string {
	var b strings.Builder
	b.WriteString("user::rwx,group::r-x,mask::rwx,other::---")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, ",user:%08x-0000-4000-8000-%012x:r-x", i, i)
	}
	if def {
		b.WriteString(",default:user::rwx,default:group::r-x,default:mask::rwx,default:other::---")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, ",default:user:%08x-0000-4000-8000-%012x:r-x", i, i)
		}
	}
	return b.String()
}

// BenchmarkParseMax parses the largest ACL Azure accepts: 32 access and
// 32 default entries, 28 of each named users with object ids.
func BenchmarkParseMax(b *testing.B) {
	s := namedACL(28, true)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHuge is a 16,000-entry x-ms-acl (8,000 named access and
// 8,000 named default entries, about 740 KB): refused.
func BenchmarkParseHuge(b *testing.B) {
	s := namedACL(7996, true)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		Parse(s) //nolint:errcheck // refused or not, the time is what counts
	}
}

// BenchmarkUnmarshalHuge reads back a stored 16,000-entry ACL, as every
// Get Properties and List Paths of such a path did.
func BenchmarkUnmarshalHuge(b *testing.B) {
	j := []byte(fmt.Sprintf(`{"a":%q}`, namedACL(7996, true)))
	b.SetBytes(int64(len(j)))
	for i := 0; i < b.N; i++ {
		var a ACL
		if err := a.UnmarshalJSON(j); err != nil {
			b.Fatal(err)
		}
	}
}
