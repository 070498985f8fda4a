package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// helperEnv makes the test binary act as a stand-in for the demo: it runs
// interruptible with a body that prints "ready" and waits to be stopped, as
// the demo waits for Ctrl-C once everything is up.
const helperEnv = "DEMO_INTERRUPT_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		if os.Getenv(helperEnv) == "no-foreground" {
			takeTerminal = func() func() { return func() {} }
		}
		os.Exit(interruptible(func(ctx context.Context) error {
			fmt.Printf("ready pgid=%d\n", syscall.Getpgrp())
			<-ctx.Done()
			fmt.Println("stopping...")
			return nil
		}))
	}
	os.Exit(m.Run())
}

// TestCtrlCEndsMakeCleanly runs make on a terminal (a pseudo-terminal whose
// session make leads, as in a shell), with a recipe that runs the demo's
// stand-in, and types Ctrl-C once it is up: make must exit 0 and report
// nothing, like the demo.
func TestCtrlCEndsMakeCleanly(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make not installed")
	}
	out, err := ctrlCUnderMake(t, makePath, "1")
	if err != nil {
		t.Fatalf("make ended with %v after Ctrl-C, want exit 0; output:\n%s", err, out)
	}
	if !strings.Contains(out, "stopping...") {
		t.Errorf("the stand-in did not stop on Ctrl-C; output:\n%s", out)
	}
	if strings.Contains(out, "***") {
		t.Errorf("make reported an error; output:\n%s", out)
	}
	// Without the terminal handoff, make gets the SIGINT too: GNU make (4.3
	// here) waits for the recipe and then kills itself with it. Logged, not
	// required: it is the reason for foreground, not a property of the demo.
	_, err = ctrlCUnderMake(t, makePath, "no-foreground")
	t.Logf("the same run without the terminal handoff: make ended with %v", err)
}

// ctrlCUnderMake runs `make` in a new session on a pseudo-terminal, with a
// Makefile whose recipe runs this test binary as the demo's stand-in, types
// Ctrl-C once the stand-in says it is ready, and returns the terminal's output
// and make's Wait error.
func ctrlCUnderMake(t *testing.T, makePath, helper string) (string, error) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("demo:\n\t"+self+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(makePath, "--no-print-directory", "demo")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), helperEnv+"="+helper)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			out.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	output := func() string { mu.Lock(); defer mu.Unlock(); return out.String() }
	ready := regexp.MustCompile(`ready pgid=(\d+)`)
	var pgid int
	for deadline := time.Now().Add(time.Minute); pgid == 0; time.Sleep(20 * time.Millisecond) {
		if m := ready.FindStringSubmatch(output()); m != nil {
			if _, err := fmt.Sscan(m[1], &pgid); err != nil {
				t.Fatalf("ready line %q: %v", m[0], err)
			}
		} else if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			t.Fatalf("the stand-in did not get ready; output:\n%s", output())
		}
	}
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		time.Sleep(50 * time.Millisecond) // the last output
		return output(), err
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done //nolint:errcheck // killed: its exit status says nothing
		t.Fatalf("make did not end within 30s of Ctrl-C; output:\n%s", output())
		return "", nil
	}
}

// openPTY opens a pseudo-terminal pair (what posix_openpt, unlockpt and
// ptsname do), or skips the test where there is none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	var unlock int32
	var n uint32
	if err := ioctl(fd, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		master.Close()
		t.Skipf("unlockpt: %v", err)
	}
	if err := ioctl(fd, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		master.Close()
		t.Skipf("ptsname: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Skipf("open the pseudo-terminal's slave: %v", err)
	}
	return master, slave
}

// TestMakeDemoBuildsTheDemo guards the other half of the fix: `go run` exits
// 1 after any SIGINT it received, even when its program exited 0, so the
// Makefile must build the demo and run the binary.
func TestMakeDemoBuildsTheDemo(t *testing.T) {
	b, err := os.ReadFile(testkit.Path(t, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe, ok := targetRecipe(string(b), "demo")
	if !ok {
		t.Fatal("the Makefile has no demo target")
	}
	if regexp.MustCompile(`\brun\s+\./tools/demo`).MatchString(recipe) {
		t.Errorf("make demo runs the demo through go run, which exits 1 after Ctrl-C:\n%s", recipe)
	}
	if !strings.Contains(recipe, "./tools/demo") {
		t.Errorf("make demo does not build ./tools/demo:\n%s", recipe)
	}
}

// targetRecipe returns the recipe lines (tab-indented) of a make target.
func targetRecipe(makefile, target string) (string, bool) {
	lines := strings.Split(makefile, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, target+":") {
			continue
		}
		var r []string
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "\t") {
				break
			}
			r = append(r, l)
		}
		return strings.Join(r, "\n"), true
	}
	return "", false
}

func TestDashboardsHint(t *testing.T) {
	root := testkit.Path(t, ".")
	t.Chdir(root)
	hint, err := dashboardsHint("http://127.0.0.1:9090")
	if err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(root, "dashboards", "json", "*.json")
	if !strings.Contains(hint, glob) {
		t.Errorf("the hint does not name %s:\n%s", glob, hint)
	}
	for _, want := range []string{"Dashboards > New > Import", "deploy/grafana/provisioning", "http://127.0.0.1:9090"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint does not say %q:\n%s", want, hint)
		}
	}
	t.Chdir(t.TempDir())
	if _, err := dashboardsHint(""); err == nil {
		t.Error("no error outside the repository")
	}
}
