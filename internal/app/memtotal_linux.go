package app

import "golang.org/x/sys/unix"

// totalMemory returns the machine's physical memory in bytes (0: unknown).
func totalMemory() uint64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
