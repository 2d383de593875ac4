package app

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"1", 1},
		{"1048576", 1 << 20},
		{"100B", 100},
		{"64k", 64 << 10},
		{"64KiB", 64 << 10},
		{"512M", 512 << 20},
		{"512mb", 512 << 20},
		{"2G", 2 << 30},
		{"1.5G", 3 << 29},
		{"1T", 1 << 40},
		{" 8M ", 8 << 20},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "-5M", "M", "1.5", "12X", "1e3", "0.1B", "NaNG", "InfG", "9999999999T", "1 G G"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestDefaultExtentMemoryLimit(t *testing.T) {
	total := totalMemory()
	got := DefaultExtentMemoryLimit()
	if total == 0 {
		if got != -1 {
			t.Fatalf("unknown total: limit %d, want -1", got)
		}
		return
	}
	if got != int64(total/2) || got <= 0 {
		t.Fatalf("limit %d, want half of %d", got, total)
	}
}

// FuzzParseSize: ParseSize never panics, and what it accepts is a
// positive size that is never less than the number written.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1", "512M", "2GiB", "1.5g", "-1", "", "kb", "1e400G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 1 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if strings.TrimSpace(s) == "" {
			t.Fatalf("ParseSize(%q) accepted blank input", s)
		}
	})
}
