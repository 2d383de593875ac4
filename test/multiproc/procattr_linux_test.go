package multiproc

import "syscall"

// procAttr makes the kernel kill a server process when the test process
// dies, so a crashed or timed-out test leaves no servers behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
