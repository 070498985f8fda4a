package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/common/version"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/enginedb"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/rest"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Engine is one configured Camunda 7 engine (or fork). Its poll source
// probes it with GET /version, which is what camunda_up means (the engine
// answers) and gives the engine's clock and version for the collection that
// follows, then runs one collector per aspect of the engine, each of which
// can fail alone (workflow_exporter_collector_up{collector=...}): an engine
// version without an endpoint one aspect needs loses that aspect's series
// only.
//
//   - "camunda" (externalTasksCollector, externaltasks.go): external
//     tasks, their history log, incidents;
//   - "camunda_jobs" (jobsCollector, jobs.go): async jobs;
//   - "camunda_processes" (processesCollector, processes.go): running
//     process instances per process definition.
//
// Every aspect reads the engine through one reader (reading.Reader),
// chosen here: the REST API (collectors/engine/rest) or, with
// camunda[].database, the engine's own tables (collectors/engine/enginedb);
// the rules, the request budget and what cannot be known are in
// docs/camunda-states.md.
type Engine struct {
	// client is the REST client (GET /version and the flavor, in both
	// modes); nil for an engine read without camunda[].url, whose database
	// (db) is probed instead.
	client *camunda.Client
	db     *enginedb.Reader // engine-database mode, else nil
	reader reading.Reader
	name   string
	key    string // the config key, e.g. "camunda[0]"
	cfg    config.Camunda
	logger *slog.Logger

	// at is what the probe of the current collection read (zero before
	// it, and after a failed one). The collectors run after the probe,
	// one at a time.
	at reading.Probe
	// productName is cached per engine version: the telemetry product name
	// only changes with the engine. dbFlavor is what the database probe
	// found, without camunda[].url.
	productName, productFor string
	dbFlavor                camunda.Flavor
	// lvl is the history level found for the engine version (levels.go).
	lvl levelState

	tasks *externalTasksCollector
	jobs  *jobsCollector
	procs *processesCollector
	// history is nil when history_cleanup.enabled is false.
	history *historyCollector
}

// Collector names, which are also the aspects of the engine database the
// reader checks separately: a table one collector needs and cannot read
// fails that collector only.
const (
	nameTasks     = vocab.CollectorCamunda
	nameJobs      = vocab.CollectorCamundaJobs
	nameProcesses = vocab.CollectorCamundaProcesses
	nameHistory   = vocab.CollectorCamundaHistory
)

// Options are the shared parts an engine's collectors need.
type Options struct {
	Folds *labellimit.Stats
	// Views receives the engine's in-flight tasks after every successful
	// collection (withdrawn when one fails), for the database side's joins;
	// nil publishes nothing.
	Views *correlate.Registry
	// StatusItems, when above 0, turns on the status page's reading with
	// lists of at most that many items (poll.SourceOptions.StatusItems).
	StatusItems int
	Logger      *slog.Logger
}

// NewClient is the one mapping of an engine's configuration onto a REST
// client, for the collectors and for `workflow-exporter check` alike.
func NewClient(cfg config.Camunda, logger *slog.Logger) (*camunda.Client, error) {
	return camunda.New(camunda.Config{
		BaseURL: cfg.URL, Engine: cfg.Engine, Username: cfg.Username, Password: cfg.Password,
		TLS: camunda.TLSConfig{
			CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			ServerName: cfg.TLS.ServerName, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify,
		},
		Timeout:         time.Duration(cfg.RequestTimeout),
		MaxResultsLimit: cfg.MaxResultsLimit,
		Logger:          orDiscard(logger).With("engine", cfg.Name),
		Version:         version.Version,
	})
}

// OpenSchemaCheck opens the database of an engine configured with
// camunda[].database as engine-database mode opens it, for
// `workflow-exporter check`; it connects to nothing yet.
func OpenSchemaCheck(cfg config.Camunda, key string, logger *slog.Logger) (*enginedb.SchemaCheck, error) {
	client, err := optionalClient(cfg, key, logger)
	if err != nil {
		return nil, err
	}
	return enginedb.OpenSchemaCheck(cfg, key, client, logger)
}

// optionalClient is the engine's REST client, nil without camunda[].url
// (engine-database mode alone).
func optionalClient(cfg config.Camunda, key string, logger *slog.Logger) (*camunda.Client, error) {
	if cfg.URL == "" {
		return nil, nil
	}
	client, err := NewClient(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return client, nil
}

// New returns one engine with its collectors. key is the config key, e.g.
// "camunda[0]". It connects to nothing.
func New(cfg config.Camunda, key string, o Options) (*Engine, error) {
	logger := orDiscard(o.Logger)
	if o.Folds == nil {
		o.Folds = labellimit.NewStats()
	}
	client, err := optionalClient(cfg, key, logger)
	if err != nil {
		return nil, err
	}
	e := &Engine{client: client, name: cfg.Name, key: key, cfg: cfg, logger: logger}
	if cfg.Database != nil {
		if e.db, err = enginedb.New(cfg, key, client, logger); err != nil {
			return nil, err
		}
		e.reader = e.db
	} else {
		e.reader = rest.New(cfg, client, logger)
	}
	e.tasks = newExternalTasksCollector(e, o)
	e.jobs = newJobsCollector(e, o)
	e.procs = newProcessesCollector(e, o)
	if cfg.HistoryCleanup.On() {
		e.history = newHistoryCollector(e, o)
	}
	return e, nil
}

// Collectors are the engine's collectors, in the order a collection runs
// them.
func (e *Engine) Collectors() []collectors.Collector {
	cs := []collectors.Collector{e.tasks, e.jobs, e.procs}
	if e.history != nil {
		cs = append(cs, e.history)
	}
	return cs
}

// Probe reads GET /version: the engine answers (camunda_up), its version,
// and its clock for the collectors of this collection. The telemetry
// product name, which tells the forks apart, is asked once per engine
// version; the history level as learnLevel says. Without camunda[].url the
// engine's database answers instead (enginedb's Reader.Probe: its clock,
// its schema version, the flavor its tables tell).
func (e *Engine) Probe(ctx context.Context) error {
	e.at = reading.Probe{}
	var v string
	var now time.Time
	var err error
	if e.client == nil {
		var p enginedb.Probed
		if p, err = e.db.Probe(ctx); err == nil {
			v, now, e.dbFlavor = p.Version, p.Now, p.Flavor
		}
	} else if v, now, err = e.client.VersionAt(ctx); err == nil {
		err = e.learnProduct(ctx, v)
	}
	if err == nil {
		err = e.learnLevel(ctx, v)
	}
	if err != nil {
		// The collectors do not run: the joins must not go on reporting
		// from the view of the last collection that reached the engine.
		e.tasks.views.Withdraw(e.name)
		return err
	}
	e.at = reading.Probe{Now: now, Version: v, Level: e.lvl.found.Level}
	return nil
}

// probed returns what this collection's probe read, for the collectors'
// requests; a collector called without one (never by a poll source) fails.
func (e *Engine) probed() (reading.Probe, error) {
	if e.at.Now.IsZero() {
		return reading.Probe{}, fmt.Errorf("camunda: engine %s: no probe answer (GET /version, or its database) in this collection", e.name)
	}
	return e.at, nil
}

// flavor is the engine's flavor label: over REST from the version and the
// telemetry product name, without camunda[].url what the database probe
// found (camunda.FlavorUnknown where the tables cannot tell).
func (e *Engine) flavor(version string) camunda.Flavor {
	if e.client == nil {
		return e.dbFlavor
	}
	return camunda.DetectFlavor(version, e.productName)
}

// Close releases the engine database's connections, in engine-database mode.
func (e *Engine) Close() { e.reader.Close() }

// learnProduct asks the engine for its telemetry product name, which tells
// the forks apart, once per engine version, answer or not: the endpoint may
// be forbidden for the exporter's user or missing in a fork.
func (e *Engine) learnProduct(ctx context.Context, version string) error {
	if e.productFor == version {
		return nil
	}
	name, err := e.client.ProductName(ctx)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		e.logger.Debug("camunda: no telemetry product name; detecting flavor from the version alone", "engine", e.name, "error", err.Error())
	}
	e.productName, e.productFor = name, version
	return nil
}

// folder is a labellimit.Limiter or labellimit.Ranked: their folds are counted when the
// collection succeeds and forgotten when it fails.
type folder interface {
	Flush()
	Discard()
}

// settle flushes the folds of a successful collection or discards those of
// a failed one.
func settle(err error, limiters ...folder) {
	for _, l := range limiters {
		if err != nil {
			l.Discard()
		} else {
			l.Flush()
		}
	}
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
