// Package promtest runs Prometheus and Alertmanager binaries as child
// processes for end-to-end tests: each on a free 127.0.0.1 port, with a
// throwaway data directory and the configuration the test gives, waited for
// until /-/ready answers, and stopped and cleaned up when the test ends.
//
// It is the harness of the alerting end-to-end tests (test/e2e, and
// StartAlerting here): the exporter and PostgreSQL are wired in by the
// caller; this package knows nothing of them. Two flavors of the binaries
// are known (Flavor): Debian 12's packages (/usr/bin/prometheus,
// /usr/bin/prometheus-alertmanager; PROMTEST_PROMETHEUS and
// PROMTEST_ALERTMANAGER override the paths), which the package-level Start
// functions run, and the current releases that scripts/install-deps.sh
// builds. StartPrometheusEach, StartAlertingEach and Each run a check on
// both at once. Under -short the Start functions skip the test
// (testkit.Tool).
package promtest

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Default binary paths (Debian 12 packages).
const (
	DefaultPrometheus   = "/usr/bin/prometheus"
	DefaultAlertmanager = "/usr/bin/prometheus-alertmanager"
)

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

// SkipIfMissing skips the test under -short and when a binary is not
// installed, unless PROMTEST_REQUIRE is set (CI sets it, so a missing
// package fails the run instead of passing it silently): see testkit.Tool.
func SkipIfMissing(t testing.TB, bins ...string) {
	t.Helper()
	for _, b := range bins {
		testkit.Tool(t, b, debianPackage(b))
	}
}

// debianPackage names the package that installs a binary.
func debianPackage(bin string) string {
	if strings.Contains(filepath.Base(bin), "alertmanager") {
		return "prometheus-alertmanager"
	}
	return "prometheus"
}

// Server is a running Prometheus or Alertmanager.
type Server struct {
	*testkit.Server
	// Dir holds the config files and the data directory.
	Dir string
	// Flavor is the flavor of the binary (Debian's for Launch...).
	Flavor Flavor
}

// FlavorName implements Flavored.
func (s *Server) FlavorName() string { return s.Flavor.Name }

// Files are extra files written next to the configuration (rule files,
// templates), by name relative to Dir.
type Files map[string]string

// StartPrometheus starts Prometheus with the given prometheus.yml content.
// Rule files named in the config with relative paths are looked up in Dir,
// so pass them in files. Extra flags are appended (for example
// "--rules.alert.resend-delay=1s").
func StartPrometheus(t testing.TB, config string, files Files, flags ...string) *Server {
	t.Helper()
	return Debian().StartPrometheus(t, config, files, flags...)
}

// StartAlertmanager starts Alertmanager with the given alertmanager.yml
// content, clustering disabled.
func StartAlertmanager(t testing.TB, config string, flags ...string) *Server {
	t.Helper()
	return Debian().StartAlertmanager(t, config, flags...)
}

// launch writes <name>.yml and the files into a fresh directory, and starts
// bin (of flavor f, whose Start method has checked it is there) there on a
// free port with the config, the listen address, info logging and args; it
// is stopped when the test ends.
func launch(t testing.TB, f Flavor, bin, name, config string, files Files, args []string) *Server {
	t.Helper()
	dir := t.TempDir()
	files = maps.Clone(files)
	if files == nil {
		files = Files{}
	}
	files[name+".yml"] = config
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
	s, err := spawn(name, bin, dir, addr, append([]string{
		"--config.file=" + filepath.Join(dir, name+".yml"),
		"--web.listen-address=" + addr,
		"--log.level=info",
	}, args...))
	if err != nil {
		t.Fatal(err)
	}
	s.Flavor = f
	t.Cleanup(func() {
		_ = s.Stop()
		if t.Failed() {
			t.Logf("%s (%s) log (tail):\n%s", name, f.Name, testkit.Tail(s.Log.String(), 40))
		}
	})
	return s
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
