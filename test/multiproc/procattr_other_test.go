//go:build !linux

package multiproc

import "syscall"

// procAttr: without Linux's parent-death signal, cleanup alone stops the
// server processes.
func procAttr() *syscall.SysProcAttr { return nil }
