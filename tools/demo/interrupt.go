package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// interruptible runs body until it returns or the user stops the demo
// (Ctrl-C, SIGINT or SIGTERM cancel body's context, and body stops what it
// started), and returns the demo's exit status: 0 when it was stopped, which
// is how a demo ends, even if body was still starting and returns the
// cancellation as an error; 1 when body failed on its own.
//
// On a terminal, Ctrl-C signals the terminal's whole foreground process
// group, and `make demo` runs the demo in make's group. GNU make, on SIGINT,
// waits for its recipe and then kills itself with the same signal, so
// `make demo` ended with status 130 however cleanly the demo stopped. So the
// demo first takes the terminal for a process group of its own (foreground):
// Ctrl-C then reaches the demo and what it started, not make, which sees the
// demo exit 0 and exits 0 itself.
func interruptible(body func(context.Context) error) int {
	release := takeTerminal()
	defer release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := body(ctx)
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "demo: stopped before everything was up:", err)
		return 0
	default:
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 1
	}
}

// takeTerminal is foreground; a test replaces it to show what make does
// without it.
var takeTerminal = foreground

// foreground moves the demo into a new process group and makes that group
// the foreground group of the controlling terminal, and returns the function
// that hands the terminal back to the group the demo came from. It does
// nothing when there is no controlling terminal or when the demo is not in
// its foreground group (run in the background, under CI, by a script with
// its output redirected and no terminal): then there is no Ctrl-C to route.
//
// Ctrl-Z would stop only the demo's group, while make and the shell wait for
// it: the terminal would hang, so the demo ignores SIGTSTP (and SIGTTOU,
// which tcsetpgrp from a background group raises).
func foreground() (release func()) {
	nothing := func() {}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nothing
	}
	fd := int(tty.Fd())
	orig, err := tcgetpgrp(fd)
	if err != nil || orig != syscall.Getpgrp() {
		tty.Close()
		return nothing
	}
	signal.Ignore(syscall.SIGTTOU, syscall.SIGTSTP)
	if err := syscall.Setpgid(0, 0); err != nil {
		tty.Close()
		return nothing
	}
	if err := tcsetpgrp(fd, syscall.Getpgrp()); err != nil {
		_ = syscall.Setpgid(0, orig)
		tty.Close()
		return nothing
	}
	return func() {
		_ = tcsetpgrp(fd, orig)
		tty.Close()
	}
}

func tcgetpgrp(fd int) (int, error) {
	var pgid int32
	err := ioctl(fd, syscall.TIOCGPGRP, unsafe.Pointer(&pgid))
	return int(pgid), err
}

func tcsetpgrp(fd, pgid int) error {
	p := int32(pgid)
	return ioctl(fd, syscall.TIOCSPGRP, unsafe.Pointer(&p))
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); e != 0 {
		return e
	}
	return nil
}
