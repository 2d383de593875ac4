// Package profile starts CPU profiles for the server (CERULEAN_CPUPROFILE)
// and the load generator (-cpuprofile) alike, without pulling either's
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
