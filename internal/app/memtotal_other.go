//go:build !linux

package app

// totalMemory returns 0 (unknown) where it is not implemented: the
// in-memory store then has no default limit.
func totalMemory() uint64 { return 0 }
