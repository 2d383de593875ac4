// Package profile starts CPU profiles for the server (CERULEAN_CPUPROFILE)
// and the load generator (-cpuprofile) alike, and writes the server's
// allocation profile (CERULEAN_ALLOCPROFILE), without pulling either's
// dependencies into the other.
package profile

import (
	"os"
	"runtime/pprof"
)

// CPU starts a CPU profile written to path (nothing if path is empty);
// stop ends it and closes the file.
func CPU(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// Allocs returns the function that writes the allocation profile since
// the process started to path (nothing if path is empty), for `go tool
// pprof -sample_index=alloc_space` or alloc_objects: where a request's
// allocations come from, which CPU profiles show only as GC time.
func Allocs(path string) (write func() error) {
	if path == "" {
		return func() error { return nil }
	}
	return func() error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}
