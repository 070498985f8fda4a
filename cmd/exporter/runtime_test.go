package main

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
)

// startExporter starts the binary with a config whose only source is an
// engine nobody listens on, and returns its base URL.
func startExporter(t *testing.T, flags ...string) string {
	t.Helper()
	return exportertest.Start(t, exportertest.Options{Config: "camunda: [{name: nowhere, url: 'http://127.0.0.1:1/engine-rest'}]\n", Flags: flags}).URL
}

var hrefRe = regexp.MustCompile(`href="([^"]*)"`)

// landingLinks returns the links of the landing page that point at the
// exporter itself, as absolute URLs.
func landingLinks(t *testing.T, base string) []string {
	t.Helper()
	page := get(t, base+"/", 200)
	b, _ := url.Parse(base + "/")
	var out []string
	for _, m := range hrefRe.FindAllStringSubmatch(page, -1) {
		u, err := b.Parse(m[1])
		if err != nil {
			t.Fatalf("landing page link %q: %v", m[1], err)
		}
		if u.Host != b.Host {
			continue // pprof.me and the like
		}
		out = append(out, u.String())
	}
	return out
}

// TestLandingPageLinksResolve: every link of the landing page to the exporter
// answers 200. The profiling links appear, and work, only with
// --web.enable-pprof.
func TestLandingPageLinksResolve(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		pprof bool
	}{
		{"default", nil, false},
		{"pprof enabled", []string{"--web.enable-pprof"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := startExporter(t, tc.flags...)
			links := landingLinks(t, base)
			hasPprof := false
			for _, l := range links {
				if strings.Contains(l, "/debug/pprof/") {
					hasPprof = true
					// The CPU profile link asks for 60 seconds.
					l = strings.Replace(l, "seconds=60", "seconds=1", 1)
				}
				get(t, l, 200)
			}
			if len(links) < 3 {
				t.Errorf("landing page links %v, want at least metrics, health and readiness", links)
			}
			if hasPprof != tc.pprof {
				t.Errorf("profiling links on the landing page: %v, want %v (%v)", hasPprof, tc.pprof, links)
			}
			if !tc.pprof {
				get(t, base+"/debug/pprof/", 404)
			}
		})
	}
}

// TestStandardSelfMetrics: build_info from client_golang's version collector
// with every label, and the metrics handler's own counters.
func TestStandardSelfMetrics(t *testing.T) {
	base := startExporter(t)
	get(t, base+"/metrics", 200)
	body := get(t, base+"/metrics", 200)
	buildInfo := regexp.MustCompile(`(?m)^workflow_exporter_build_info\{branch="[^"]*",goarch="[^"]+",goos="[^"]+",goversion="go[^"]+",revision="[^"]*",tags="[^"]*",version="[^"]*"\} 1$`)
	if !buildInfo.MatchString(body) {
		t.Errorf("no build_info with all the version collector's labels:\n%s", grep(body, "build_info"))
	}
	for _, want := range []string{
		`promhttp_metric_handler_requests_total{code="200"} 1`,
		`promhttp_metric_handler_requests_in_flight 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, grep(body, "promhttp_"))
		}
	}
}

// TestErrorsArePrintedOnce: whatever stops the exporter is said once, not
// logged and printed again.
func TestErrorsArePrintedOnce(t *testing.T) {
	bin := exportertest.Build(t)
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknown := write("unknown.yml", "databases: [{name: orders, dsn: 'postgres://127.0.0.1:1/x', tabels: {}}]\n")
	badDSN := write("baddsn.yml", "databases: [{name: orders, dsn: 'postgres://127.0.0.1:notaport/x'}]\n")
	good := write("good.yml", "camunda: [{name: nowhere, url: 'http://127.0.0.1:1/engine-rest'}]\n")
	badWeb := write("web.yml", "tls_server_config: {cert_file: /nonexistent.pem}\n")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"--config.file", unknown}, "databases[0].tabels (line 1): unknown key; did you mean databases[0].tables?"},
		{"unknown key, --config.check", []string{"--config.file", unknown, "--config.check"}, "databases[0].tabels (line 1): unknown key"},
		{"missing file", []string{"--config.file", filepath.Join(dir, "none.yml")}, "none.yml: no such file or directory"},
		{"bad dsn", []string{"--config.file", badDSN}, "the DSN cannot be parsed"},
		{"bad telemetry path", []string{"--config.file", good, "--web.telemetry-path", "metrics"}, "must start with /"},
		{"unknown flag", []string{"--web.listen-adress", ":1"}, "unknown long flag '--web.listen-adress'"}, //nolint:misspell // the typo is the input
		{"port in use", []string{"--config.file", good, "--web.listen-address", busy.Addr().String()}, "address already in use"},
		{"bad web config", []string{"--config.file", good, "--web.config.file", badWeb, "--config.check"}, "missing one of key or key_file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, tc.args...).CombinedOutput()
			if exitCode(err) <= 0 {
				t.Fatalf("exit %d, want a failure:\n%s", exitCode(err), out)
			}
			if n := strings.Count(string(out), tc.want); n != 1 {
				t.Errorf("%q appears %d times, want once:\n%s", tc.want, n, out)
			}
		})
	}
}
