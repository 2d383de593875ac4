package auth

import "strings"

// The culture-style header-name order used by azblob and azfile.
//
// It is a two-level comparison in the manner of a Windows/.NET culture sort:
//
//  1. Primary level: characters are compared by a primary weight, and
//     characters without one ('-', '\'', control characters, space and most
//     other punctuation) are skipped on each side independently. Among the
//     characters that have a weight the order is
//     ! # $ % & * . ^ _ ` | ~ + 0-9 a-z (letters case-insensitive), and a
//     string that runs out first sorts first. So "x-ms-meta-ab" sorts before
//     "x-ms-meta-a-c" here ("ab" < "ac"), the reverse of byte order.
//  2. Secondary level, only when the primary level ties: both strings are
//     walked position by position. Only '\'' and '-' carry a secondary
//     weight; every other character is "plain". At the first position where
//     the two differ in kind, the order is plain < end of string < '\'' < '-'.
//     So "x-ms-meta-ac" sorts before "x-ms-meta-a-c".
//
// The SDK's own comparator returns "equal" for some distinct names made of
// characters that cannot appear in an HTTP header name (e.g. "a:b" and
// "a;b") and indexes out of range on bytes >= 0x80; CompareHeaderNames
// breaks such ties by byte order and gives non-ASCII bytes a primary weight
// after the letters, so it is a total order on all strings.

// primaryOrder lists the characters that have a primary weight, lightest
// first. Upper-case letters weigh the same as their lower-case forms.
const primaryOrder = "!#$%&*.^_`|~+0123456789abcdefghijklmnopqrstuvwxyz"

var primaryWeight = func() (w [256]uint16) {
	for i := 0; i < len(primaryOrder); i++ {
		c := primaryOrder[i]
		w[c] = uint16(i + 1)
		if 'a' <= c && c <= 'z' {
			w[c-'a'+'A'] = uint16(i + 1)
		}
	}
	for c := 0x80; c < 0x100; c++ {
		w[c] = uint16(len(primaryOrder) + 1 + c - 0x80)
	}
	return w
}()

// Secondary ranks: plain characters, end of string, apostrophe, hyphen.
const (
	secPlain = iota
	secEnd
	secApostrophe
	secHyphen
)

func secondaryRank(s string, i int) int {
	if i >= len(s) {
		return secEnd
	}
	switch s[i] {
	case '\'':
		return secApostrophe
	case '-':
		return secHyphen
	}
	return secPlain
}

// CompareHeaderNames compares two header names in the culture-style order
// azblob and azfile use for canonicalized headers. It returns -1, 0 or +1;
// it returns 0 only for identical strings.
func CompareHeaderNames(a, b string) int {
	// A common prefix is walked identically at both levels, so start after
	// it.
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	if k == len(a) && k == len(b) {
		return 0
	}
	// Primary level.
	i, j := k, k
	for {
		for i < len(a) && primaryWeight[a[i]] == 0 {
			i++
		}
		for j < len(b) && primaryWeight[b[j]] == 0 {
			j++
		}
		if i == len(a) || j == len(b) {
			if i == len(a) && j == len(b) {
				break
			}
			if i == len(a) {
				return -1
			}
			return 1
		}
		if wa, wb := primaryWeight[a[i]], primaryWeight[b[j]]; wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	// Secondary level.
	for ; k < len(a) || k < len(b); k++ {
		ra, rb := secondaryRank(a, k), secondaryRank(b, k)
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}
