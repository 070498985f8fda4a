// Command demo is `make demo`: the whole product running on 127.0.0.1 as
// local processes. A throwaway PostgreSQL with the worker tables, a Camunda
// 7.24 engine (built with Maven on first use), the workload simulator
// (test/sim) with a few lanes of idempotent workers, the exporter
// binary, Debian's Prometheus with the alert rules, and Debian's
// Alertmanager with deploy/alertmanager.yml, whose receivers point at a
// small webhook here that prints every notification. It prints the URLs
// and how to inject each fault, and on Ctrl-C stops everything and removes
// its files.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/sim"
)

// fastAlerts are the windows of the alert matrix (test/e2e): alerts come in
// minutes instead of the production windows' quarter hours.
const fastAlerts = `
outbox: {stalled_window: 1m, stalled_for: 0s, oldest_age_for: 0s, keep_firing_for: 1m}
inbox: {stalled_window: 1m, stalled_for: 0s}
idempotency: {unknown_outcome_age: 1m, unknown_outcome_for: 0s, stale_for: 0s, conflicts_window: 1m, conflicts_max: 0, completed_task_open_for: 10s, in_doubt_for: 10s, processed_job_task_open_for: 10s}
camunda: {retries_exhausted_for: 0s, lock_expirations_window: 1m, lock_expirations_max: 0, retry_storm_window: 1m, retry_storm_min_failures: 50, retry_storm_for: 0s, backlog_stalled_age: 1m, backlog_stalled_window: 1m, backlog_stalled_for: 0s, duplicate_execution_window: 1m}
exporter: {source_down_for: 30s, down_for: 30s, min_interval: 5s}
`

func main() {
	bin := flag.String("exporter", "bin/workflow-exporter", "exporter binary")
	fast := flag.Bool("fast", false, "render the alert rules with 1m windows and short for: durations (as the alert matrix test does), so faults notify within a minute or two")
	control := flag.String("control", "127.0.0.1:7841", "the simulator's control endpoint (a free port if taken)")
	flag.Parse()
	os.Exit(interruptible(func(ctx context.Context) error { return run(ctx, *bin, *control, *fast) }))
}

func step(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

func run(ctx context.Context, bin, control string, fast bool) error {
	dir, err := os.MkdirTemp("", "workflow-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logFile, err := os.Create(filepath.Join(dir, "simulator.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()

	step("PostgreSQL (throwaway, Debian's server binaries)")
	srv, err := pgtest.Start()
	if err != nil {
		return err
	}
	defer srv.Stop()
	dsn, err := workerDatabase(ctx, srv)
	if err != nil {
		return err
	}

	step("Camunda 7.24 engine (the first run builds it with Maven: about a minute, ~140 MB of downloads)")
	engine, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCamunda})
	if err != nil {
		return err
	}
	defer engine.Stop()
	fmt.Printf("    engine %s up in %s\n", engine.Version, engine.StartupTime.Round(time.Second))

	step("workload simulator: lanes orders, payments, shipping")
	lanes := []sim.Lane{{Name: "orders", Database: "orders"}, {Name: "payments", Database: "orders"}, {Name: "shipping", Database: "orders"}}
	s, err := sim.New(ctx, sim.Config{EngineURL: engine.BaseURL, EngineName: "main", Databases: map[string]string{"orders": dsn},
		Lanes: lanes, EngineProxy: "127.0.0.1:0", DatabaseProxies: map[string]string{"orders": "127.0.0.1:0"},
		Logger: slog.New(slog.NewTextHandler(logFile, nil))})
	if err != nil {
		return err
	}
	defer s.Close()
	cl, err := listen(control)
	if err != nil {
		return err
	}
	ctlSrv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = ctlSrv.Serve(cl) }()
	defer ctlSrv.Close()
	simDone := make(chan error, 1)
	go func() { simDone <- s.Run(ctx) }()

	step("exporter (%s)", bin)
	exporterAddr, stopExporter, err := startExporter(ctx, bin, dir, s, dsn)
	if err != nil {
		return err
	}
	defer stopExporter()

	step("Alertmanager with deploy/alertmanager.yml, receivers -> the webhook below")
	hook, err := startWebhook()
	if err != nil {
		return err
	}
	defer hook.Close()
	amCfg, err := os.ReadFile("deploy/alertmanager.yml")
	if err != nil {
		return err
	}
	amText, err := promtest.RewriteWebhookURLs(string(amCfg), "http://127.0.0.1:5001", "http://"+hook.Addr)
	if err != nil {
		return err
	}
	amDir := filepath.Join(dir, "alertmanager")
	if err := writeFile(filepath.Join(amDir, "alertmanager.yml"), amText); err != nil {
		return err
	}
	am, err := promtest.LaunchAlertmanager(filepath.Join(amDir, "alertmanager.yml"), amDir)
	if err != nil {
		return err
	}
	defer am.Stop()

	what := "alerts/workflow-alerts.yml (the shipped windows: the outbox page comes about 7 minutes after the publisher stops)"
	ruleText, err := os.ReadFile("alerts/workflow-alerts.yml")
	if err != nil {
		return err
	}
	if fast {
		cfg, err := rules.Parse([]byte(fastAlerts))
		if err != nil {
			return err
		}
		if ruleText, err = rules.Render(cfg); err != nil {
			return err
		}
		what = "rules rendered with 1m windows (-fast): alerts within a minute or two"
	}
	step("Prometheus with %s", what)
	promDir := filepath.Join(dir, "prometheus")
	if err := writeFile(filepath.Join(promDir, "rules.yml"), string(ruleText)); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(promDir, "prometheus.yml"), fmt.Sprintf(`global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: workflow-exporter
    static_configs:
      - targets: [%q]
`, am.Addr, exporterAddr)); err != nil {
		return err
	}
	prom, err := promtest.LaunchPrometheus(filepath.Join(promDir, "prometheus.yml"), promDir)
	if err != nil {
		return err
	}
	defer prom.Stop()

	dashboards, err := dashboardsHint(prom.URL)
	if err != nil {
		return err
	}
	simURL := "http://" + cl.Addr().String()
	var faults []string
	for _, f := range sim.Faults() {
		target := "orders"
		switch f.Target {
		case sim.TargetEngine:
			target = ""
		}
		// make demo builds bin/workflow-sim next to the exporter.
		faults = append(faults, strings.TrimRight(fmt.Sprintf("    bin/workflow-sim --sim %s inject %s %s", simURL, f.Name, target), " "))
	}
	fmt.Printf(`
Everything runs on 127.0.0.1:
  exporter metrics     http://%s/metrics
  status page          http://%s/status   (which tasks and records, by their identifiers)
  Prometheus           %s/alerts
  Alertmanager         %s
  simulator status     %s/
  Camunda REST         %s
  PostgreSQL           %s
  simulator log        %s

%s
Notifications that reach the pager and ticket receivers are printed below.
Inject a fault (lanes: orders, payments, shipping; the engine faults take no lane):
%s
Clear one with "clear" instead of "inject". The list with what each does: bin/workflow-sim faults
docs/alerts.md says which alert each fault raises. Press Ctrl-C to stop and remove everything.

`, exporterAddr, exporterAddr, prom.URL, am.URL, simURL, engine.BaseURL, dsn, logFile.Name(), dashboards, strings.Join(faults, "\n"))

	select {
	case <-ctx.Done():
	case err := <-simDone:
		if err != nil {
			return err
		}
	}
	fmt.Println("\nstopping...")
	return nil
}

// dashboardsHint says where the Grafana dashboards are and how to load them
// into a Grafana of one's own (the demo runs none): their absolute path, so
// it can be pasted into a file dialog, and the import steps.
func dashboardsHint(prometheusURL string) (string, error) {
	dir, err := filepath.Abs(filepath.Join("dashboards", "json"))
	if err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("no dashboards in %s (run the demo from the repository root): %v", dir, err)
	}
	return fmt.Sprintf(`Grafana dashboards (%d, not started here): %s
  In your Grafana: Dashboards > New > Import, upload each file, and choose a Prometheus data source
  that points at %s; or provision them from deploy/grafana/provisioning (docs/dashboards.md).
`, len(files), filepath.Join(dir, "*.json"), prometheusURL), nil
}

// workerDatabase creates the "orders" database with the reference schema,
// the duplicate_count extension and the exporter's indexes.
func workerDatabase(ctx context.Context, srv *pgtest.Server) (string, error) {
	admin, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE orders"); err != nil {
		admin.Close(ctx)
		return "", err
	}
	admin.Close(ctx)
	dsn := pgtest.WithDatabase(srv.AdminURL, "orders")
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	for _, f := range []string{"deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql"} {
		if err := pgtest.ExecFile(ctx, conn, f, nil); err != nil {
			return "", err
		}
	}
	return dsn, nil
}

// startExporter runs the exporter binary against the simulator's proxies
// (so the engine and database faults act on what the exporter sees).
func startExporter(ctx context.Context, bin, dir string, s *sim.Simulator, dsn string) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, err
	}
	u.Host = s.DatabaseProxyAddr("orders")
	cfg := fmt.Sprintf(`camunda:
  - name: main
    url: http://%s/engine-rest
    min_interval: 5s
databases:
  - name: orders
    dsn_env: DEMO_ORDERS_DSN
    min_interval: 5s
`, s.EngineProxyAddr())
	cfgFile := filepath.Join(dir, "exporter.yml")
	if err := writeFile(cfgFile, cfg); err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:7840")
	if err != nil {
		l, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
	}
	addr := l.Addr().String()
	l.Close()
	logFile, err := os.Create(filepath.Join(dir, "exporter.log"))
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "--config.file", cfgFile, "--web.listen-address", addr)
	cmd.Env = append(os.Environ(), "DEMO_ORDERS_DSN="+u.String())
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return "", nil, fmt.Errorf("start %s (run `make build` first): %w", bin, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	}
	for i := 0; i < 100; i++ {
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			return addr, stop, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("the exporter did not get ready on %s (see %s)", addr, logFile.Name())
}

// webhook prints each Alertmanager notification: receiver, status, alert,
// severity, labels and runbook.
type webhook struct {
	Addr string
	srv  *http.Server
}

func (w *webhook) Close() { _ = w.srv.Close() }

func startWebhook() (*webhook, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &webhook{Addr: l.Addr().String()}
	h.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var payload struct {
			Alerts []struct {
				Status      string            `json:"status"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"alerts"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &payload); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		receiver := strings.TrimPrefix(r.URL.Path, "/")
		for _, a := range payload.Alerts {
			var ls []string
			for k, v := range a.Labels {
				if k != "alertname" && k != "severity" {
					ls = append(ls, k+"="+v)
				}
			}
			sort.Strings(ls)
			fmt.Printf("[%s] %-6s %-8s %s (%s) %s\n        %s\n        runbook: %s\n", time.Now().Format("15:04:05"),
				receiver, strings.ToUpper(a.Status), a.Labels["alertname"], a.Labels["severity"], strings.Join(ls, " "),
				a.Annotations["summary"], a.Annotations["runbook_url"])
		}
	})}
	go func() { _ = h.srv.Serve(l) }()
	return h, nil
}

func listen(addr string) (net.Listener, error) {
	if l, err := net.Listen("tcp", addr); err == nil {
		return l, nil
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
