package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// JavaJar prepares `java <jvm> -Djava.io.tmpdir=<dir> -jar <jar>` for a
// harness that runs a JVM application: it finds java, makes the
// application's temporary directory (the caller removes it when the
// application is gone) and returns the command with its arguments so far.
// owner names the harness in errors.
func JavaJar(owner, jar string, jvm []string) (java, dir string, args []string, err error) {
	java, err = exec.LookPath("java")
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: java not found (apt-get install openjdk-17-jre-headless): %w", owner, err)
	}
	dir, err = os.MkdirTemp("", owner+"-")
	if err != nil {
		return "", "", nil, err
	}
	args = append(append([]string{}, jvm...), "-Djava.io.tmpdir="+dir, "-jar", jar)
	return java, dir, args, nil
}

// ForTest runs a harness's start for a test: it skips under -short (what
// names the external process), gives start at most timeout, fails the test
// on error and runs stop when the test ends.
func ForTest[T any](t testing.TB, what string, timeout time.Duration, start func(context.Context) (T, error), stop func(T)) T {
	t.Helper()
	SkipIfShort(t, what)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, err := start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(v) })
	return v
}

// Closed reports whether ch is closed: whether the process a harness
// watches (its exit closes ch) has exited.
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
