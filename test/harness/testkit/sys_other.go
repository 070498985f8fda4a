//go:build !linux

package testkit

import (
	"os"
	"os/exec"
)

// The harnesses are meant for Linux (CI); elsewhere a child process is
// killed alone and builds are not serialised across processes.

// OwnProcessGroup does nothing here.
func OwnProcessGroup(cmd *exec.Cmd) {}

// KillGroup kills p alone.
func KillGroup(p *os.Process) error { return p.Kill() }

// ProcessAlive reports whether a process with this pid can be found.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

// LockFile does not lock here.
func LockFile(path string) (func(), error) { return func() {}, nil }
