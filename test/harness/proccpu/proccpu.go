// Package proccpu reads the CPU time processes have used, from /proc, for
// the benchmarks that measure what a collection costs the engine and the
// database besides its wall time: a process's own time, a PostgreSQL
// server's (its postmaster and every backend, live or reaped), a HotSpot
// JVM's split by thread kind, and the calling process's own.
package proccpu

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ClockTick is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100
// on every Linux architecture this runs on, so the resolution is 10 ms.
const ClockTick = 10 * time.Millisecond

// Stat reads a process's parent, its own CPU time (utime+stime, all
// threads) and the CPU time of its children that it waited for
// (cutime+cstime).
func Stat(pid int) (ppid int, self, children time.Duration, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	num := func(k int) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
	// f[0] is field 3 (state): ppid is field 4, utime..cstime 14..17.
	return int(num(1)), time.Duration(num(11)+num(12)) * ClockTick, time.Duration(num(13)+num(14)) * ClockTick, nil
}

// Process is one process's CPU time so far.
func Process(pid int) (time.Duration, error) {
	_, self, _, err := Stat(pid)
	return self, err
}

// Tree is the CPU time so far of a server process and its children: its
// own, its reaped children's, and every live child's (for PostgreSQL: the
// postmaster, the backends, autovacuum, the background writer...). A child
// that exits moves its time from the live sum into the reaped one, so the
// total only grows.
func Tree(pid int) (time.Duration, error) {
	_, self, reaped, err := Stat(pid)
	if err != nil {
		return 0, err
	}
	total := self + reaped
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		ppid, self, _, err := Stat(child)
		if err == nil && ppid == pid {
			total += self
		}
	}
	return total, nil
}

// JVMThreads sums the CPU time of a HotSpot JVM's JIT compiler threads
// ("C1 CompilerThre", "C2 CompilerThre") and garbage collector threads
// ("GC Thread#N", "G1 ...", "VM Thread"), by thread name.
func JVMThreads(pid int) (jit, gc time.Duration) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if i < 0 || j < i {
			continue
		}
		name := string(b[i+1 : j])
		f := strings.Fields(string(b[j+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		d := time.Duration(u+st) * ClockTick
		switch {
		case strings.HasPrefix(name, "C1 Compiler"), strings.HasPrefix(name, "C2 Compiler"):
			jit += d
		case strings.HasPrefix(name, "GC Thread"), strings.HasPrefix(name, "G1 "), name == "VM Thread":
			gc += d
		}
	}
	return jit, gc
}

// Self is the calling process's CPU time so far (user and system, all
// threads).
func Self() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LoadAverage is /proc/loadavg's 1, 5 and 15 minute figures ("unknown"
// when it cannot be read): other work on a machine shows in every timing.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
