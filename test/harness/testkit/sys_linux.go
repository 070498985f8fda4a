package testkit

import (
	"os"
	"os/exec"
	"syscall"
)

// OwnProcessGroup puts a child process in its own process group (so a
// signal to the test's group does not reach it first, and KillGroup kills it
// with its children at once) and asks the kernel to kill it if the test
// process dies without stopping it.
func OwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// KillGroup kills the process group led by p.
func KillGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return p.Kill()
	}
	return nil
}

// ProcessAlive reports whether a process with this pid exists (and is not a
// zombie already reaped).
func ProcessAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// LockFile takes an exclusive flock on path, blocking; the returned func
// releases it. It serialises builds of a shared cache across the `go test`
// processes of one run (one per package) and across worktrees.
func LockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
