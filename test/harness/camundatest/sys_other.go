//go:build !linux

package camundatest

import (
	"os"
	"os/exec"
)

// The harness is meant for Linux (CI); elsewhere the JVM is killed alone and builds are not
// serialised across processes.

func prepareCmd(cmd *exec.Cmd) {}

func killGroup(p *os.Process) error { return p.Kill() }

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}

func lockFile(path string) (func(), error) { return func() {}, nil }
