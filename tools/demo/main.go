// Command demo is `make demo`: the whole product running on 127.0.0.1 as
// local processes. A throwaway PostgreSQL with the worker tables, a Camunda
// 7.24 engine (built with Maven on first use), the workload simulator
// (sim/) with a few lanes of idempotent workers, the exporter
// binary, Debian's Prometheus with the alert rules, and Debian's
// Alertmanager with deploy/alertmanager.yml, whose receivers point at a
// small webhook here that prints every notification. It prints the URLs
// and how to inject each fault, and on Ctrl-C stops everything and removes
// its files.
//
// With -run it is `make run`: the exporter alone, for working on its
// metrics. No Prometheus and Alertmanager; the database also holds sample
// rows of every situation (sample.sql); the exporter logs to the console;
// and where the engine cannot start (no Java or Maven) the simulator runs
// without one, the database side only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/sim"
	"github.com/workflow-exporter/workflow-exporter/sim/notify"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// fastAlerts are the windows of the alert matrix (test/e2e): alerts come in
// minutes instead of the production windows' quarter hours, and, as there,
// consequences wait longer than the root causes that inhibit them.
const fastAlerts = `
outbox: {stalled_window: 1m, stalled_for: 0s, oldest_age_for: 0s}
relay: {lag: 1m}
inbox: {stalled_window: 1m, stalled_for: 0s, for: 0s}
idempotency: {unknown_outcome_age: 1m, unknown_outcome_for: 0s, stale_for: 10s, conflicts_window: 1m, conflicts_max: 0, completed_task_open_for: 10s, in_doubt_for: 10s, processed_job_task_open_for: 30s}
camunda: {retries_exhausted_for: 0s, lock_expirations_window: 2m, lock_expirations_max: 0, lock_expirations_for: 30s, retry_storm_window: 1m, retry_storm_min_failures: 50, retry_storm_for: 0s, backlog_stalled_age: 1m, backlog_stalled_window: 1m, backlog_stalled_for: 0s, duplicate_execution_window: 2m, duplicate_execution_for: 30s}
exporter: {source_down_for: 30s, pages_keep_firing_for: 1m, down_for: 30s, min_interval: 5s}
delivery: {lost_for: 10s, duplicates_for: 30s}
`

func main() {
	var o options
	flag.StringVar(&o.bin, "exporter", "bin/workflow-exporter", "exporter binary")
	flag.BoolVar(&o.fast, "fast", false, "render the alert rules with 1m windows and short for: durations (as the alert matrix test does), so faults notify within a minute or two")
	flag.StringVar(&o.control, "control", "127.0.0.1:7841", "the simulator's control endpoint (a free port if taken)")
	flag.StringVar(&o.listen, "listen", "127.0.0.1:7840", "the exporter's listen address (a free port if taken)")
	flag.BoolVar(&o.exporterOnly, "run", false, "make run: the exporter alone (no Prometheus, no Alertmanager), sample rows in the database, the exporter's log on the console, and no engine if it cannot start")
	flag.Parse()
	os.Exit(interruptible(func(ctx context.Context) error { return run(ctx, o) }))
}

type options struct {
	bin, control, listen string
	fast, exporterOnly   bool
}

func step(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

func run(ctx context.Context, o options) error {
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

	step("PostgreSQL (throwaway, Debian's server binaries, wal_level=logical for the relay lane)")
	srv, err := pgtest.StartWith(relaytest.LogicalSettings)
	if err != nil {
		return err
	}
	defer srv.Stop()
	files := []string{"deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql"}
	dsn, err := workerDatabase(ctx, srv, "orders", append(files, sampleRows(o)...))
	if err != nil {
		return err
	}
	// billing: the consumer of the orders lane's events (a delivery).
	billingDSN, err := workerDatabase(ctx, srv, "billing", files) // no sample rows
	if err != nil {
		return err
	}
	// The relay lane: an outbox drained by change data capture, in a
	// database of its own (the exporter watches one outbox per database).
	// Where it cannot run (no logical decoding, no pg_recvlogical) the demo
	// says why and goes on without it.
	cdcDSN, err := workerDatabase(ctx, srv, relayDatabase, files)
	if err != nil {
		return err
	}
	if err := sim.CheckRelay(ctx, cdcDSN, ""); err != nil {
		fmt.Printf("    relay lane %s not started: %v\n    continuing without it\n", relayDatabase, err)
		cdcDSN = ""
	}

	step("Camunda 7.24 engine (the first run builds it with Maven: about a minute, ~140 MB of downloads)")
	engineURL := ""
	engine, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCamunda})
	switch {
	case err == nil:
		defer engine.Stop()
		engineURL = engine.BaseURL
		fmt.Printf("    engine %s up in %s\n", engine.Version, engine.StartupTime.Round(time.Second))
	case o.exporterOnly:
		fmt.Printf("    not started (%v)\n    continuing without an engine: the workload runs from the lanes' own feeds, the database side only\n", err)
	default:
		return err
	}

	laneNames, relayNote := "orders (its events delivered to database billing), payments, shipping", ""
	lanes := []sim.Lane{{Name: "orders", Database: "orders", Consumer: "billing"}, {Name: "payments", Database: "orders"}, {Name: "shipping", Database: "orders"}}
	databases := map[string]string{"orders": dsn, "billing": billingDSN}
	if cdcDSN != "" {
		laneNames += ", " + relayDatabase
		relayNote = " (" + relayDatabase + ": its outbox drained by change data capture, pg_recvlogical on a replication slot)"
		lanes = append(lanes, sim.Lane{Name: relayDatabase, Database: relayDatabase, Relay: true})
		databases[relayDatabase] = cdcDSN
	}
	step("workload simulator: lanes %s%s", laneNames, relayNote)
	cfg := sim.Config{EngineURL: engineURL, EngineName: "main", Databases: databases,
		Lanes: lanes, DatabaseProxies: map[string]string{"orders": "127.0.0.1:0", "billing": "127.0.0.1:0"},
		Logger: slog.New(slog.NewTextHandler(logFile, nil))}
	if engineURL != "" {
		cfg.EngineProxy = "127.0.0.1:0"
	}
	s, err := sim.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	controlAddr, err := testkit.ListenAddr(o.control)
	if err != nil {
		return err
	}
	cl, err := net.Listen("tcp", controlAddr)
	if err != nil {
		return err
	}
	ctlSrv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = ctlSrv.Serve(cl) }()
	defer ctlSrv.Close()
	simDone := make(chan error, 1)
	go func() { simDone <- s.Run(ctx) }()

	step("exporter (%s)", o.bin)
	var exporterLog io.Writer = os.Stdout
	if !o.exporterOnly {
		f, err := os.Create(filepath.Join(dir, "exporter.log"))
		if err != nil {
			return err
		}
		defer f.Close()
		exporterLog = f
	}
	exporter, err := startExporter(ctx, o, dir, s, map[string]string{"orders": dsn, "billing": billingDSN}, lanes[0], cdcDSN, exporterLog)
	if err != nil {
		return err
	}
	defer func() { _ = exporter.Stop() }()

	var urls strings.Builder
	var dashboards string // where the Grafana dashboards are, with Prometheus
	fmt.Fprintf(&urls, "  exporter metrics     %s/metrics\n  status page          %s/status   (which tasks and records, by their identifiers)\n", exporter.URL, exporter.URL)
	if !o.exporterOnly {
		alerting, err := startAlerting(o, dir, exporter.Addr)
		if err != nil {
			return err
		}
		defer alerting.stop()
		fmt.Fprintf(&urls, "  Prometheus           %s/alerts\n  Alertmanager         %s\n", alerting.prom.URL, alerting.am.URL)
		hint, err := dashboardsHint(alerting.prom.URL)
		if err != nil {
			return err
		}
		dashboards = "\n" + hint
	}
	simURL := "http://" + cl.Addr().String()
	camundaURL := engineURL
	if camundaURL == "" {
		camundaURL = "(not started)"
	}
	fmt.Fprintf(&urls, "  simulator status     %s/\n  Camunda REST         %s\n  PostgreSQL           %s\n                       %s\n  simulator log        %s\n", simURL, camundaURL, dsn, billingDSN, logFile.Name())
	var faults []string
	for _, f := range sim.Faults() {
		if engineURL == "" && (f.NeedsEngine || f.Target == sim.TargetEngine) {
			continue // refused without an engine
		}
		target := "orders"
		switch {
		case f.Target == sim.TargetEngine:
			target = ""
		case f.Name == sim.FaultRelayStopped && cdcDSN == "":
			continue // no relay lane
		case f.Name == sim.FaultRelayStopped:
			target = relayDatabase
		}
		// make demo and make run build bin/workflow-sim next to the exporter.
		faults = append(faults, strings.TrimRight(fmt.Sprintf("    bin/workflow-sim --sim %s inject %s %s", simURL, f.Name, target), " "))
	}
	notifications := "Notifications that reach the pager and ticket receivers are printed below.\n"
	if o.exporterOnly {
		notifications = "The exporter's log follows.\n"
	}
	fmt.Printf(`
Everything runs on 127.0.0.1:
%s%s
%sInject a fault (lanes: %s; the engine faults take no lane; messages-lost drops the orders lane's events on
their way to database billing, the delivery sim-orders):
%s
Clear one with "clear" instead of "inject". The list with what each does: bin/workflow-sim faults
docs/alerts.md says which alert each fault raises. Press Ctrl-C to stop and remove everything.

`, urls.String(), dashboards, notifications, laneNames, strings.Join(faults, "\n"))

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
		return "", fmt.Errorf("no dashboards in %s (run the demo from the repository root): %w", dir, err)
	}
	return fmt.Sprintf(`Grafana dashboards (%d, not started here): %s
  In your Grafana: Dashboards > New > Import, upload each file, and choose a Prometheus data source
  that points at %s; or provision them from deploy/grafana/provisioning (docs/dashboards.md).
`, len(files), filepath.Join(dir, "*.json"), prometheusURL), nil
}

// relayDatabase is the database, and the lane, of the demo's outbox relay.
const relayDatabase = "cdc"

// sampleRows are the sample rows of every situation, for make run.
func sampleRows(o options) []string {
	if o.exporterOnly {
		return []string{"tools/demo/sample.sql"}
	}
	return nil
}

// workerDatabase creates the database and runs the SQL files in it (the
// reference schema, the duplicate_count extension, the exporter's indexes,
// and for make run the sample rows).
func workerDatabase(ctx context.Context, srv *pgtest.Server, name string, files []string) (string, error) {
	admin, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		return "", err
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		admin.Close(ctx)
		return "", err
	}
	admin.Close(ctx)
	dsn := pgtest.WithDatabase(srv.AdminURL, name)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	for _, f := range files {
		if err := pgtest.ExecFile(ctx, conn, f, nil); err != nil {
			return "", err
		}
	}
	return dsn, nil
}

// startExporter runs the exporter binary against the simulator's proxies
// (so the engine and database faults act on what the exporter sees), its
// log to out: the databases by name (their DSNs), the delivery of the
// lane that delivers from orders to billing, and the relay lane's database
// (cdcDSN, empty without it).
func startExporter(ctx context.Context, o options, dir string, s *sim.Simulator, dsns map[string]string, delivering sim.Lane, cdcDSN string, out io.Writer) (*exportertest.Exporter, error) {
	var env []string
	cfg := "databases:\n"
	for _, name := range []string{"orders", "billing"} {
		u, err := url.Parse(dsns[name])
		if err != nil {
			return nil, err
		}
		u.Host = s.DatabaseProxyAddr(name)
		v := "DEMO_" + strings.ToUpper(name) + "_DSN"
		env = append(env, v+"="+u.String())
		cfg += fmt.Sprintf("  - name: %s\n    dsn_env: %s\n    min_interval: 5s\n", name, v)
	}
	if cdcDSN != "" {
		l := sim.Lane{Name: relayDatabase}
		cfg += fmt.Sprintf("  - name: %s\n    dsn_env: DEMO_CDC_DSN\n    min_interval: 5s\n    tables:\n      outbox: {table: %s, relay: {slot: %s}}\n",
			relayDatabase, l.RelayTable(), l.Slot())
		env = append(env, "DEMO_CDC_DSN="+cdcDSN)
	}
	cfg += fmt.Sprintf("deliveries:\n  - {name: %s, from: {database: %s, event_types: [%s]}, to: {database: %s, source_systems: [%s]}, deadline: 1m, min_interval: 5s}\n",
		delivering.Delivery(), delivering.Database, delivering.EventType(), delivering.Consumer, delivering.DeliverySourceSystem())
	if addr := s.EngineProxyAddr(); addr != "" {
		cfg += fmt.Sprintf("camunda:\n  - name: main\n    url: http://%s/engine-rest\n    min_interval: 5s\n", addr)
	}
	addr, err := testkit.ListenAddr(o.listen)
	if err != nil {
		return nil, err
	}
	return exportertest.Launch(ctx, exportertest.Options{Binary: o.bin, Config: cfg, Dir: dir, Addr: addr,
		Env: env, Output: out})
}

// alerting is Prometheus with the rules and Alertmanager with
// deploy/alertmanager.yml, whose receivers point at a webhook that prints.
type alerting struct {
	prom, am *promtest.Server
	hook     *webhook
}

func (a *alerting) stop() {
	if a.prom != nil {
		_ = a.prom.Stop()
	}
	if a.am != nil {
		_ = a.am.Stop()
	}
	a.hook.Close()
}

func startAlerting(o options, dir, exporterAddr string) (_ *alerting, err error) {
	step("Alertmanager with deploy/alertmanager.yml, receivers -> the webhook below")
	a := &alerting{}
	if a.hook, err = startWebhook(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.stop()
		}
	}()
	amCfg, err := os.ReadFile("deploy/alertmanager.yml")
	if err != nil {
		return nil, err
	}
	amText, err := promtest.RewriteWebhookURLs(string(amCfg), "http://127.0.0.1:5001", "http://"+a.hook.Addr)
	if err != nil {
		return nil, err
	}
	amDir := filepath.Join(dir, "alertmanager")
	if err := writeFile(filepath.Join(amDir, "alertmanager.yml"), amText); err != nil {
		return nil, err
	}
	if a.am, err = promtest.LaunchAlertmanager(filepath.Join(amDir, "alertmanager.yml"), amDir); err != nil {
		return nil, err
	}

	what := "alerts/workflow-alerts.yml (the shipped windows: the outbox page comes about 7 minutes after the publisher stops)"
	ruleText, err := os.ReadFile("alerts/workflow-alerts.yml")
	if err != nil {
		return nil, err
	}
	if o.fast {
		cfg, err := rules.Parse([]byte(fastAlerts))
		if err != nil {
			return nil, err
		}
		if ruleText, err = rules.Render(cfg); err != nil {
			return nil, err
		}
		what = "rules rendered with 1m windows (-fast): alerts within a minute or two"
	}
	step("Prometheus with %s", what)
	promDir := filepath.Join(dir, "prometheus")
	if err := writeFile(filepath.Join(promDir, "rules.yml"), string(ruleText)); err != nil {
		return nil, err
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
`, a.am.Addr, exporterAddr)); err != nil {
		return nil, err
	}
	if a.prom, err = promtest.LaunchPrometheus(filepath.Join(promDir, "prometheus.yml"), promDir); err != nil {
		return nil, err
	}
	return a, nil
}

// webhook prints each Alertmanager notification (notify.Printer).
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
	h.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: &notify.Printer{W: os.Stdout}}
	go func() { _ = h.srv.Serve(l) }()
	return h, nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
