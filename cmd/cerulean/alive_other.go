//go:build !unix

package main

import "os"

// processAlive reports whether process pid exists: on Windows,
// FindProcess opens the process and fails when there is none.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
