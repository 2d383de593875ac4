package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat:
// 100 on every Linux architecture Go supports (the kernel exports
// USER_HZ=100 to user space whatever its internal HZ; proc(5)).
const clockTicks = 100

// ProcessCPU returns the user plus system CPU time the process pid has
// used so far, from fields 14 (utime) and 15 (stime) of /proc/PID/stat
// (proc(5)). The command name in field 2 may hold spaces or parentheses,
// so the fields are counted from the last ')'.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' in %q", b)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// meter, when set (the -server-pid flag), is the process whose CPU Run
// charges to each workload it times.
var meter *cpuMeter

// cpuMeter reads one server process's CPU time.
type cpuMeter struct{ pid int }

// read returns the process's CPU so far; an unreadable /proc entry (the
// server gone) reads as 0 and is reported by the caller's check.
func (m *cpuMeter) read() time.Duration {
	if m == nil {
		return 0
	}
	d, _ := ProcessCPU(m.pid)
	return d
}
