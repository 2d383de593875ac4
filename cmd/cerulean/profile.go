package main

import (
	"os"
	"runtime/pprof"
)

// cpuProfile starts a CPU profile written to path (none if empty) and
// returns the function that stops and writes it.
func cpuProfile(path string) (stop func(), err error) {
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
