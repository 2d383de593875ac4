package queue

import "testing"

// TestSameMetadata: Create Queue's "same metadata" compares names
// case-insensitively and values exactly (moved here from internal/wire
// with the function, which only the Queue domain uses).
func TestSameMetadata(t *testing.T) {
	for _, c := range []struct {
		a, b map[string]string
		want bool
	}{
		{nil, map[string]string{}, true},
		{map[string]string{"Author": "ann"}, map[string]string{"author": "ann"}, true},
		{map[string]string{"a": "x"}, map[string]string{"a": "X"}, false},
		{map[string]string{"a": "1"}, map[string]string{"a": "1", "b": "2"}, false},
		{map[string]string{"a": "1", "c": "3"}, map[string]string{"a": "1", "b": "3"}, false},
	} {
		if got := sameMetadata(c.a, c.b); got != c.want || sameMetadata(c.b, c.a) != c.want {
			t.Errorf("sameMetadata(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
