package camundatest

import (
	"os"
	"os/exec"
	"syscall"
)

// prepareCmd puts the JVM in its own process group (so Stop can kill it and any children at once)
// and asks the kernel to kill it if the test process dies without calling Stop.
func prepareCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group led by p.
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return p.Kill()
	}
	return nil
}

// processAlive reports whether a process with this pid exists (and is not a zombie we reaped).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// lockFile takes an exclusive flock on path, blocking; the returned func releases it.
func lockFile(path string) (func(), error) {
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
