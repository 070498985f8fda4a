// Package exportertest builds the exporter binary (cmd/exporter) and runs
// it as a user does: a config file, flags, environment variables, a
// listen address, its log kept. It is the one way the tests (cmd/exporter,
// test/e2e, test/reliability, test/bench) and the local tools (make demo,
// make run) start it.
//
//	x := exportertest.Start(t, exportertest.Options{Config: "databases: ...", Env: []string{"ORDERS_DSN=" + dsn}})
//	body := x.Get(t, "/metrics")
//	x.WriteConfig(t, other); x.Reload() // SIGHUP
//
// Start skips the test under -short: a running exporter is not in the fast
// tier. Build is: it only runs the Go toolchain, once per change of the
// sources (testkit.GoBuild).
package exportertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Build returns the exporter binary built from this tree (without the race
// detector, as users run it), building it only when the sources changed.
func Build(t testing.TB) string {
	t.Helper()
	return testkit.GoBuild(t, "./cmd/exporter")
}

// Options configure Start and Launch.
type Options struct {
	// Binary is the exporter to run; Start builds it when empty.
	Binary string
	// Config is the content of the config file (--config.file); empty:
	// started without one.
	Config string
	// Dir holds the config file; Start uses a temporary directory of the
	// test when empty.
	Dir string
	// Addr is the listen address (--web.listen-address); Start picks a free
	// 127.0.0.1 port when empty.
	Addr string
	// Flags are appended to the command line.
	Flags []string
	// Env is added to the environment (NAME=value): DSNs and passwords the
	// config names with dsn_env and password_env.
	Env []string
	// NoWait returns as soon as the process runs, for a listener the plain
	// readiness probe cannot reach (TLS, basic auth): the caller waits.
	NoWait bool
	// Output, when set, also receives the exporter's log.
	Output io.Writer
}

// Exporter is a running exporter binary.
type Exporter struct {
	*testkit.Server
	// ConfigFile is the config file's path ("" without one).
	ConfigFile string
}

// Start runs the exporter for the test and waits until it serves
// /-/healthy; it is stopped (SIGTERM) when the test ends, and its log is
// shown if the test failed. It skips the test under -short.
func Start(t testing.TB, o Options) *Exporter {
	t.Helper()
	testkit.SkipIfShort(t, "the exporter binary")
	if o.Binary == "" {
		o.Binary = Build(t)
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Addr == "" {
		o.Addr = testkit.FreeAddr(t)
	}
	x, err := Launch(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = x.Stop()
		if t.Failed() {
			t.Logf("exporter log (tail):\n%s", testkit.Tail(x.Log.String(), 60))
		}
	})
	return x
}

// Launch runs the exporter outside a test (make demo, make run): Binary,
// Addr and, with a Config, Dir are required. Stop it with Stop.
func Launch(ctx context.Context, o Options) (*Exporter, error) {
	if o.Binary == "" || o.Addr == "" {
		return nil, errors.New("exportertest: Launch needs the binary and the listen address")
	}
	x := &Exporter{}
	var args []string
	if o.Config != "" {
		if o.Dir == "" {
			return nil, errors.New("exportertest: a config needs a directory to be written to")
		}
		x.ConfigFile = filepath.Join(o.Dir, "config.yml")
		if err := x.writeConfig(o.Config); err != nil {
			return nil, err
		}
		args = append(args, "--config.file", x.ConfigFile)
	}
	args = append(append(args, "--web.listen-address", o.Addr), o.Flags...)
	ready := "/-/healthy"
	if o.NoWait {
		ready = ""
	}
	s, err := testkit.StartServer(ctx, testkit.ServerOptions{Name: "exporter", Path: o.Binary, Args: args, Addr: o.Addr,
		Env: o.Env, Ready: ready, ReadyTimeout: 30 * time.Second, Output: o.Output})
	if err != nil {
		return nil, fmt.Errorf("%w (run `make build` first if %s is missing)", err, o.Binary)
	}
	x.Server = s
	return x, nil
}

// WriteConfig replaces the config file, written beside it and renamed, as
// config management does: a reload never reads half a file.
func (x *Exporter) WriteConfig(t testing.TB, doc string) {
	t.Helper()
	if err := x.writeConfig(doc); err != nil {
		t.Fatal(err)
	}
}

func (x *Exporter) writeConfig(doc string) error {
	tmp := x.ConfigFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, x.ConfigFile)
}

// Reload asks the exporter to read its config again (SIGHUP).
func (x *Exporter) Reload() error { return x.Signal(syscall.SIGHUP) }

// Get returns the body of GET path, failing the test unless it answers 200.
func (x *Exporter) Get(t testing.TB, path string) string {
	t.Helper()
	resp, err := http.Get(x.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", path, resp.StatusCode, err, b)
	}
	return string(b)
}
