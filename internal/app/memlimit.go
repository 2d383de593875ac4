package app

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultExtentMemoryLimit is the in-memory chunk store's limit when none
// is given: half of the machine's physical memory, as Azurite's
// --extentMemoryLimit defaults to half of os.totalmem() (Azure/Azurite
// src/common/persistence/MemoryExtentStore.ts,
// DEFAULT_EXTENT_MEMORY_LIMIT). Where the total is unknown, -1: no limit.
func DefaultExtentMemoryLimit() int64 {
	if total := totalMemory(); total > 0 {
		return int64(total / 2)
	}
	return -1
}

// ParseSize parses --extent-memory-limit: a positive number of bytes, or
// of KiB, MiB, GiB or TiB with a K, M, G or T suffix (case-insensitive,
// optionally followed by "B" or "iB": 512M, 2GiB, 1.5g). Azurite's
// --extentMemoryLimit counts megabytes of 1024*1024 bytes; "512M" here is
// its "512".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	u = strings.TrimSuffix(strings.TrimSuffix(u, "IB"), "B")
	mult := 1.0
	if n := len(u); n > 0 {
		switch u[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			u = u[:n-1]
		}
	}
	var v float64
	if mult == 1 {
		n, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: want bytes or a number with a K, M, G or T suffix", s)
		}
		v = float64(n)
	} else {
		f, err := strconv.ParseFloat(u, 64)
		if err != nil {
			return 0, fmt.Errorf("size %q: want bytes or a number with a K, M, G or T suffix", s)
		}
		v = f * mult
	}
	if !(v >= 1 && v <= 1<<62) { // also refuses NaN
		return 0, fmt.Errorf("size %q: want at least 1 byte", s)
	}
	return int64(v), nil
}
