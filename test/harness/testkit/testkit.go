// Package testkit holds what tests and the test harnesses (pgtest,
// camundatest, promtest, exportertest, faultproxy) share: the fast tier's
// one decision (SkipIfShort, Tool), a TestMain body that stops the shared
// harnesses (Main), a cached build of a main package
// (GoBuild), a cached build of a Maven project's jar (MavenBuild), a child
// process serving HTTP (StartServer), a concurrency-safe
// log buffer, free ports, the repository root, a throwaway CA, file locks,
// gathering a collector's metrics, and the unit tests' fixed clock (Epoch,
// At). It imports nothing of the exporter,
// so any package's tests may use it.
package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Main runs the tests, then stop (the harnesses' StopShared: shared
// servers and engines), then exits with the tests' code. Use it in
// TestMain when a package's tests share more than one harness:
//
//	func TestMain(m *testing.M) { testkit.Main(m, camundatest.StopShared, pgtest.StopShared) }
func Main(m *testing.M, stop ...func()) {
	code := m.Run()
	for _, s := range stop {
		s()
	}
	os.Exit(code)
}

// BenchMain is Main for a package of long benchmarks: the throwaway
// servers' files go to a directory of this run (TMPDIR, removed at the
// end), so that a cleanup of stray /tmp directories by a concurrent run
// cannot remove them during the minutes a benchmark takes.
func BenchMain(m *testing.M, prefix string, stop ...func()) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil && os.Chmod(dir, 0o755) == nil {
		if err := os.Setenv("TMPDIR", dir); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	for _, s := range stop {
		s()
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// LogBuffer is an io.Writer that keeps everything written to it and may be
// written and read concurrently: a logger's handler or a child process
// writes while the test reads.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another
// process may take it before the caller listens on it; the harnesses then
// fail to start their server and say so.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr returns "127.0.0.1:port" for a port FreePort found, failing the
// test when there is none.
func FreeAddr(t testing.TB) string {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// RepoRoot returns the root of the repository (the directory holding
// go.mod), found from this source file's location, so it does not depend on
// the directory a test runs in.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("testkit: cannot locate own source file")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("testkit: repository root not found at %s: %w", root, err)
	}
	return root, nil
}

// Path returns the absolute path of a file of the repository, given in slash
// form relative to its root (e.g. "deploy/sql/001_reference_schema.sql"),
// failing the test when the root cannot be found.
func Path(t testing.TB, rel string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}

// Gather registers c alone in a pedantic registry (which checks every
// metric against its descriptor) and returns what it gathers, failing the
// test on any error.
func Gather(t testing.TB, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
