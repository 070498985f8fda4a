// Command workflow-exporter serves Prometheus metrics about Camunda 7
// external tasks and the idempotency, inbox, outbox and processed-job tables
// of the workers that run them. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/statefile"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/internal/status"
)

const (
	exporterName = "workflow-exporter"
	// defaultAddress sits outside the range of the Prometheus default port
	// allocations (9100 and up), so it collides with no registered exporter.
	defaultAddress = ":7840"

	// On SIGTERM the exporter stops within shutdownBound: collections in
	// flight are cancelled (queries also on the server) and waited for at
	// most collectionsGrace, which also releases the scrapes waiting for
	// them, then the HTTP server lets in-flight requests finish for at most
	// httpGrace. docs/reliability.md states the bound; a test holds it.
	collectionsGrace = 2 * time.Second
	httpGrace        = 3 * time.Second
	shutdownBound    = collectionsGrace + httpGrace
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the parsed command line.
type options struct {
	web            *web.FlagConfig
	metricsPath    string
	enablePprof    bool
	lifecycle      bool
	disableStatus  bool
	configFile     string
	configCheck    bool
	timeoutOffset  time.Duration
	defaultTimeout time.Duration
	storagePath    string
	storageEvery   time.Duration
	storageMaxAge  time.Duration
	log            *promslog.Config
	command        string
	render         renderOptions
}

func parseFlags(args []string, stdout, stderr io.Writer) (*options, int, bool) {
	app := kingpin.New(exporterName, "Prometheus exporter for Camunda 7 external tasks and the idempotency, inbox, outbox and processed-job tables of their workers.")
	app.UsageWriter(stdout).ErrorWriter(stderr)
	exited := -1
	app.Terminate(func(code int) { exited = code })
	o := &options{log: &promslog.Config{}}
	o.web = kingpinflag.AddFlags(app, defaultAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&o.metricsPath)
	app.Flag("web.enable-pprof", "Serve the Go runtime's profiles under /debug/pprof/ (and link them from the landing page).").Default("false").BoolVar(&o.enablePprof)
	app.Flag("web.enable-lifecycle", "Reload the configuration on POST /-/reload (as SIGHUP does).").Default("false").BoolVar(&o.lifecycle)
	app.Flag("web.disable-status", "Do not serve the on-call status page (/status, /status.json), and skip the reading only it needs.").Default("false").BoolVar(&o.disableStatus)
	app.Flag("config.file", "YAML configuration file (sources, tables, limits). Without it: one Camunda engine at "+config.DefaultCamundaURL+" and no database.").Default("").StringVar(&o.configFile)
	app.Flag("config.check", "Validate the configuration file, print the result and exit.").BoolVar(&o.configCheck)
	app.Flag("scrape.timeout-offset", "Subtracted from the Prometheus scrape timeout: a scrape never waits longer for collections, it gets the previous snapshot instead.").Default("500ms").DurationVar(&o.timeoutOffset)
	app.Flag("storage.path", "Directory for the state that must survive a restart (lock first sightings, worker idle starts, redeliveries, label admissions, counter watermarks), one file per source; written periodically and on SIGTERM, read at start. Empty: kept in memory only, a restart forgets it.").Default("").StringVar(&o.storagePath)
	app.Flag("storage.write-interval", "Least time between two writes of a source's state file while running (after a collection); it is also written on SIGTERM.").Default("1m").DurationVar(&o.storageEvery)
	app.Flag("storage.max-age", "Oldest state file restored at start; an older one is stale: a warning and a fresh start.").Default("1h").DurationVar(&o.storageMaxAge)
	app.Flag("scrape.default-timeout", "Scrape timeout assumed when the scraper sends no X-Prometheus-Scrape-Timeout-Seconds header.").Default("10s").DurationVar(&o.defaultTimeout)
	promslogflag.AddFlags(app, o.log)
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	app.Command("serve", "Serve metrics (the default).").Default()
	app.Command("check", "Connect to every configured database and report, per table, missing columns, missing indexes (with CREATE INDEX statements) and whether the role can write.")
	addRenderCommands(app, &o.render)
	cmd, err := app.Parse(args)
	if exited >= 0 {
		return nil, exited, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (try --help)\n", exporterName, err)
		return nil, 2, false
	}
	o.command = cmd
	return o, 0, true
}

func run(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parseFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	o.log.Writer = stderr
	logger := promslog.New(o.log)
	if o.command == cmdRenderRules || o.command == cmdRenderDashboards || o.command == cmdRenderSLOs {
		if err := runRender(o.command, &o.render, stdout); err != nil {
			fmt.Fprintf(stderr, "%s\n", err)
			return 1
		}
		return 0
	}
	if err := validateTelemetryPath(o.metricsPath, !o.disableStatus); err != nil {
		fmt.Fprintf(stderr, "%s\n", err)
		return 1
	}
	if err := validateStorage(o); err != nil {
		fmt.Fprintf(stderr, "%s\n", err)
		return 1
	}

	// Errors that stop the exporter before it serves are printed once, as
	// plain lines naming the key or flag, not also logged.
	cfg, err := config.Load(o.configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s\n", err)
		return 1
	}
	if o.configCheck {
		if err := sources.Check(cfg, logger); err != nil {
			fmt.Fprintf(stderr, "%s\n", err)
			return 1
		}
		if f := *o.web.WebConfigFile; f != "" {
			if err := web.Validate(f); err != nil {
				fmt.Fprintf(stderr, "web config file %s: %v\n", f, err)
				return 1
			}
		}
		fmt.Fprintf(stdout, "configuration ok: %d Camunda engine(s), %d database(s)\n", len(cfg.Camunda), len(cfg.Databases))
		return 0
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if o.command == "check" {
		rep := sources.RunCheck(ctx, cfg, stdout, logger)
		if rep.Errors > 0 {
			return 1
		}
		return 0
	}
	return serve(ctx, o, cfg, logger)
}

func serve(ctx context.Context, o *options, cfg *config.Config, logger *slog.Logger) int {
	logger.Info("starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())
	folds := labellimit.NewStats()
	var storage *sources.Storage
	if o.storagePath != "" {
		storage = &sources.Storage{Dir: o.storagePath, Interval: o.storageEvery, MaxAge: o.storageMaxAge, Program: version.Info()}
	}
	mgr := sources.New(sources.Options{Folds: folds, DisableStatus: o.disableStatus, Storage: storage, Logger: logger})
	if _, err := mgr.Apply(ctx, cfg); err != nil {
		logger.Error("cannot set up sources", "err", err)
		return 1
	}
	set := mgr.Set()
	stopped := false
	defer func() {
		if !stopped {
			cctx, cancel := context.WithTimeout(context.Background(), collectionsGrace)
			defer cancel()
			mgr.Close(cctx)
		}
	}()

	// A reload reads the file again and builds what changed; a config that
	// --config.check would refuse is refused with the same message, and the
	// running one stays.
	reload := func(trigger string) error {
		next, err := config.Load(o.configFile)
		if err == nil {
			var ch sources.Changes
			if ch, err = mgr.Apply(ctx, next); err == nil {
				logger.Info("configuration reloaded", "trigger", trigger, "kept", ch.Kept, "added", ch.Added, "replaced", ch.Replaced, "removed", ch.Removed)
				return nil
			}
		}
		logger.Error("configuration reload refused; the running configuration stays", "trigger", trigger, "err", err)
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				_ = reload("SIGHUP")
			case <-ctx.Done():
				return
			}
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		versioncollector.NewCollector("workflow_exporter"),
		set,
	)

	mux := http.NewServeMux()
	// promhttp_metric_handler_requests_total and _in_flight, as every
	// client_golang exporter serves them.
	mux.Handle(o.metricsPath, promhttp.InstrumentMetricHandler(reg, poll.Handler(set, reg, poll.HandlerOptions{
		DefaultTimeout: o.defaultTimeout, Offset: o.timeoutOffset,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelError),
	})))
	// Health says the process serves; readiness does not wait for sources,
	// because a down source must still be scraped to be reported down.
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy.") })
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Ready.") })
	if o.lifecycle {
		mux.HandleFunc("/-/reload", func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost && r.Method != http.MethodPut {
				w.Header().Set("Allow", "POST, PUT")
				http.Error(w, "POST or PUT to reload the configuration", http.StatusMethodNotAllowed)
				return
			}
			if err := reload("/-/reload"); err != nil {
				http.Error(w, "configuration reload refused; the running configuration stays: "+err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintln(w, "Configuration reloaded.")
		})
	}
	// The landing page links only what this mux serves: the profiling
	// links only with --web.enable-pprof.
	links := []web.LandingLinks{
		{Address: o.metricsPath, Text: "Metrics"},
	}
	if !o.disableStatus {
		// The status page reads the same snapshots as the scrapes, through
		// the same min_interval gate and within a scrape's budget.
		h := status.NewHandlers(status.SetProvider{Set: set}, status.HandlerOptions{
			Live: func() status.Options {
				st := mgr.Status()
				return status.Options{MaxItems: st.MaxItems, RunbookBaseURL: st.RunbookBaseURL}
			},
			Budget: func(r *http.Request) time.Duration {
				return poll.ScrapeBudget(r.Header, o.defaultTimeout, o.timeoutOffset)
			},
			Logger: logger,
		})
		mux.Handle("/status", h.HTML())
		mux.Handle("/status.json", h.JSON())
		links = append(links, web.LandingLinks{Address: "/status", Text: "Status (on-call)"}, web.LandingLinks{Address: "/status.json", Text: "Status (JSON)"})
	}
	links = append(links, web.LandingLinks{Address: "/-/healthy", Text: "Health"}, web.LandingLinks{Address: "/-/ready", Text: "Readiness"})
	profiling := "false"
	if o.enablePprof {
		profiling = "true"
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        exporterName,
		Description: "Camunda 7 external tasks and worker idempotency, inbox, outbox and processed-job tables",
		Version:     version.Info(),
		Profiling:   profiling,
		Links:       links,
	})
	if err != nil {
		logger.Error("landing page", "err", err)
		return 1
	}
	mux.Handle("/", landing)

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- web.ListenAndServe(srv, o.web, logger) }()
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("HTTP server failed", "err", err)
			return 1
		}
	case <-ctx.Done():
		start := time.Now()
		logger.Info("shutting down: cancelling collections in flight, then letting requests in flight finish", "bound", shutdownBound)
		// First the collections: a scrape waiting for one gets the last
		// snapshot at once instead of keeping the server busy.
		cctx, cancel := context.WithTimeout(context.Background(), collectionsGrace)
		mgr.Close(cctx)
		cancel()
		stopped = true
		sctx, cancel := context.WithTimeout(context.Background(), httpGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			logger.Warn("requests still in flight at the end of the shutdown grace period were cut", "err", err)
		}
		logger.Info("stopped", "took", time.Since(start).Round(time.Millisecond).String())
	}
	return 0
}

// validateStorage refuses a storage path the exporter cannot write to (at
// start, naming the flag, rather than a warning at each write later) and
// bounds that cannot work.
func validateStorage(o *options) error {
	if o.storageEvery <= 0 {
		return fmt.Errorf("--storage.write-interval %s: must be positive, for example 1m", o.storageEvery)
	}
	if o.storageMaxAge <= 0 {
		return fmt.Errorf("--storage.max-age %s: must be positive, for example 1h", o.storageMaxAge)
	}
	if o.storagePath == "" || o.command != "serve" || o.configCheck {
		return nil
	}
	if err := statefile.Writable(o.storagePath); err != nil {
		return fmt.Errorf("--storage.path %q: cannot keep state there: %w (mount a writable volume, or leave the flag out to keep state in memory only)", o.storagePath, err)
	}
	return nil
}

// validateTelemetryPath refuses a metrics path the HTTP mux would panic on or
// that would take the place of the landing page, a health endpoint or (when
// served) the status page.
func validateTelemetryPath(p string, statusPage bool) error {
	bad := func(problem string) error {
		return fmt.Errorf("--web.telemetry-path %q: %s", p, problem)
	}
	switch {
	case !strings.HasPrefix(p, "/"):
		return bad("must start with /, for example /metrics")
	case p == "/":
		return bad("must not be / (the landing page)")
	case p == "/-/healthy" || p == "/-/ready" || p == "/-/reload":
		return bad("must not be " + p + " (a health endpoint)")
	case statusPage && (p == "/status" || p == "/status.json"):
		return bad("must not be " + p + " (the status page; or turn it off with --web.disable-status)")
	case strings.ContainsAny(p, "{} \t\r\n"):
		return bad("must be a plain path (no {wildcards} or white space), for example /metrics")
	}
	// Anything else the mux cannot register is refused here, not by a panic
	// at start-up.
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = bad(fmt.Sprint(r))
			}
		}()
		http.NewServeMux().Handle(p, http.NotFoundHandler())
	}()
	return err
}
