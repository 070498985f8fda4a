// Package promtest runs Debian's Prometheus and Alertmanager binaries as child
// processes for end-to-end tests: each on a free 127.0.0.1 port, with a
// throwaway data directory and the configuration the test gives, waited for
// until /-/ready answers, and stopped and cleaned up when the test ends.
//
// It is the harness of the alerting end-to-end tests (test/e2e, and
// StartAlerting here): the exporter and PostgreSQL are wired in by the caller; this package knows nothing of
// them. The binaries come from the Debian packages prometheus and
// prometheus-alertmanager (/usr/bin/prometheus, /usr/bin/prometheus-alertmanager);
// PROMTEST_PROMETHEUS and PROMTEST_ALERTMANAGER override the paths.
package promtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Default binary paths (Debian 12 packages).
const (
	DefaultPrometheus   = "/usr/bin/prometheus"
	DefaultAlertmanager = "/usr/bin/prometheus-alertmanager"
)

// readyTimeout bounds the wait for /-/ready.
const readyTimeout = 60 * time.Second

// PrometheusBinary returns the Prometheus binary to run.
func PrometheusBinary() string { return envOr("PROMTEST_PROMETHEUS", DefaultPrometheus) }

// AlertmanagerBinary returns the Alertmanager binary to run.
func AlertmanagerBinary() string { return envOr("PROMTEST_ALERTMANAGER", DefaultAlertmanager) }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// SkipIfMissing skips the test when a binary is not installed, unless
// PROMTEST_REQUIRE is set (CI sets it, so a missing package fails the run
// instead of passing it silently).
func SkipIfMissing(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("PROMTEST_REQUIRE") != "" {
				t.Fatalf("%s not found and PROMTEST_REQUIRE is set: apt-get install prometheus prometheus-alertmanager", b)
			}
			t.Skipf("%s not found (apt-get install prometheus prometheus-alertmanager)", b)
		}
	}
}

// Server is a running child process with an HTTP API.
type Server struct {
	Name string
	// URL is the base URL, e.g. http://127.0.0.1:41234.
	URL string
	// Addr is host:port, for configuration files.
	Addr string
	// Dir holds the config files and the data directory.
	Dir string

	cmd     *exec.Cmd
	log     *testkit.LogBuffer
	done    chan struct{}
	waitErr error
}

// Log returns what the process wrote so far (stdout and stderr).
func (s *Server) Log() string { return s.log.String() }

// Files are extra files written next to the configuration (rule files,
// templates), by name relative to Dir.
type Files map[string]string

// StartPrometheus starts Prometheus with the given prometheus.yml content.
// Rule files named in the config with relative paths are looked up in Dir,
// so pass them in files. Extra flags are appended (for example
// "--rules.alert.resend-delay=1s").
func StartPrometheus(t testing.TB, config string, files Files, flags ...string) *Server {
	t.Helper()
	return launch(t, PrometheusBinary(), "prometheus", config, files, append([]string{
		"--storage.tsdb.path=data",
		"--web.enable-lifecycle",
	}, flags...))
}

// StartAlertmanager starts Alertmanager with the given alertmanager.yml
// content, clustering disabled.
func StartAlertmanager(t testing.TB, config string, flags ...string) *Server {
	t.Helper()
	return launch(t, AlertmanagerBinary(), "alertmanager", config, nil, append([]string{
		"--storage.path=data",
		"--cluster.listen-address=", // no gossip port, no peers
	}, flags...))
}

// launch writes <name>.yml and the files into a fresh directory, and starts
// bin there on a free port with the config, the listen address, info
// logging and args.
func launch(t testing.TB, bin, name, config string, files Files, args []string) *Server {
	t.Helper()
	SkipIfMissing(t, bin)
	s := prepare(t, name, name+".yml", config, files)
	start(t, s, bin, append([]string{
		"--config.file=" + filepath.Join(s.Dir, name+".yml"),
		"--web.listen-address=" + s.Addr,
		"--log.level=info",
	}, args...))
	return s
}

func prepare(t testing.TB, name, configName, config string, files Files) *Server {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, configName), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, content := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := testkit.FreeAddr(t)
	return &Server{Name: name, Addr: addr, URL: "http://" + addr, Dir: dir, log: &testkit.LogBuffer{}, done: make(chan struct{})}
}

func start(t testing.TB, s *Server, bin string, args []string) {
	t.Helper()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", s.Name, tail(s.Log(), 40))
		}
	})
	if err := spawn(s, bin, args); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("exited: %v", s.waitErr)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/-/ready: %s", resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop terminates the process (SIGTERM, then SIGKILL after 10s) and waits
// for it. Safe to call more than once.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ErrNotFound is returned by RewriteWebhookURLs when the config has no
// webhook URL with the given prefix.
var ErrNotFound = errors.New("promtest: no webhook URL with that prefix")

// RewriteWebhookURLs replaces the base of every webhook URL starting with
// from (for deploy/alertmanager.yml: "http://127.0.0.1:5001") by to, keeping
// the path, so a test's receiver gets /pager and /ticket.
func RewriteWebhookURLs(config, from, to string) (string, error) {
	if !strings.Contains(config, "url: "+from) {
		return "", ErrNotFound
	}
	return strings.ReplaceAll(config, "url: "+from, "url: "+to), nil
}
