package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/labellimit"
	"github.com/workflow-exporter/workflow-exporter/internal/pgsource"
)

// Collector watches one Camunda 7 engine (or fork) and emits every camunda_*
// metric of the catalog except camunda_up, which the source emits. It reads
// the engine through an engineReader: the REST API (rest.go, the default)
// or, when camunda[].database is configured, the engine's own tables
// (enginedb.go). What it does with what it read is the same code for both:
// the state partition (tasks.go), the lock tracking (locks.go), the counters
// from the history log (history.go), incidents and jobs (incidents.go). The
// rules, the request budget and what cannot be known are documented in
// docs/camunda-states.md.
//
// State between collections (tracked tasks, counters, the history cursor,
// known topics) is built as a new value during a collection and replaces
// the old one only when the whole collection succeeded, so a failed
// collection leaves the state as it was.
type Collector struct {
	client *camunda.Client // GET /version and the flavor, in both modes
	reader engineReader
	rest   *restReader  // nil in engine-database mode
	db     *pgsource.DB // the engine database; nil in REST mode
	engine string
	cfg    config.Camunda
	logger *slog.Logger
	views  *correlate.Registry // nil: no join

	topicLimit    *labellimit.Limiter // topic label of every per-topic metric
	workerFold    *labellimit.Ranked  // worker_id per topic, admitted anew in every collection
	incidentLimit *labellimit.Limiter // (incident_type, process_definition_key, activity_id)
	jobLimit      *labellimit.Limiter // process_definition_key of jobs

	// descs are the descriptors of every metric the collector emits.
	descs catalog.Descs

	st collectorState

	// historyCut remembers that the last collection's history reading was
	// cut by max_history_entries, so the warning is logged when that starts.
	historyCut bool

	// productName is cached per engine version: the telemetry product name
	// only changes with the engine.
	productName, productFor string
}

// collectorState is everything a collection commits on success.
type collectorState struct {
	// engineNow is the engine time of the last successful collection.
	engineNow time.Time
	// topics are the topics reported (configured, seen); each keeps
	// reporting after it drains.
	topics map[string]bool
	// tasks are the tracked tasks by id.
	tasks map[string]tracked
	// expirations and redeliveries are the lock counters per topic label.
	expirations, redeliveries map[string]float64
	// history holds the failure and completion counters per topic label,
	// cursor where the history reading stands.
	history map[string]historyCounts
	cursor  historyCursor
	// evidence is what the previous collection's fresh history entries
	// said of each task: over REST the history is read before the lists,
	// so a failure or completion can reach the lists one collection before
	// it reaches the history, or the reverse; the lock tracking looks at
	// two collections' entries (see handover).
	evidence map[string]*taskEvidence
	// historyCuts counts the collections whose history reading was cut.
	historyCuts float64
	// incidents and jobs remember label tuples seen, to report 0 after
	// they clear.
	incidents map[incidentKey]bool
	oldestInc map[string]bool
	jobs      map[string]bool
}

func (s collectorState) clone() collectorState {
	return collectorState{
		engineNow:    s.engineNow,
		topics:       cloneMap(s.topics),
		tasks:        map[string]tracked{},
		expirations:  cloneMap(s.expirations),
		redeliveries: cloneMap(s.redeliveries),
		history:      cloneMap(s.history),
		cursor:       s.cursor,   // advance returns a new cursor, never changes one
		evidence:     s.evidence, // replaced, never changed
		historyCuts:  s.historyCuts,
		incidents:    cloneMap(s.incidents),
		oldestInc:    cloneMap(s.oldestInc),
		jobs:         cloneMap(s.jobs),
	}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Options are the shared parts an engine's collector needs.
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
// client, for the collector and for `workflow-exporter check` alike.
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

// New returns the collector of one engine. key is the config key, e.g.
// "camunda[0]". It connects to nothing.
func New(cfg config.Camunda, key string, o Options) (*Collector, error) {
	logger, folds := orDiscard(o.Logger), o.Folds
	client, err := NewClient(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if folds == nil {
		folds = labellimit.NewStats()
	}
	c := &Collector{
		client: client, engine: cfg.Name, cfg: cfg, logger: logger, views: o.Views,
		topicLimit:    labellimit.NewLimiter(folds, catalog.CamundaExternalTasks, cfg.LabelValueLimit),
		workerFold:    labellimit.NewRanked(folds, catalog.CamundaExternalTasksLockedByWorker, cfg.WorkerIDLimit),
		incidentLimit: labellimit.NewLimiter(folds, catalog.CamundaIncidents, cfg.LabelValueLimit),
		jobLimit:      labellimit.NewLimiter(folds, catalog.CamundaJobsRetriesExhausted, cfg.LabelValueLimit),
		descs: catalog.NewDescs(catalog.CamundaEngineInfo, catalog.CamundaExternalTasks, catalog.CamundaExternalTaskOldestWaitingAge,
			catalog.CamundaExternalTaskLockExpirations, catalog.CamundaExternalTaskRedeliveries, catalog.CamundaExternalTaskFailures,
			catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTasksLockedByWorker, catalog.CamundaIncidents,
			catalog.CamundaIncidentOldestAge, catalog.CamundaJobsRetriesExhausted, catalog.ExporterUnwatchedTasks, catalog.ExporterHistoryReadsCut),
	}
	if cfg.Database != nil {
		r, err := newEngineDBReader(cfg, key, client, logger)
		if err != nil {
			return nil, err
		}
		c.reader, c.db = r, r.db
	} else {
		c.rest = &restReader{client: client, engine: cfg.Name, logger: logger,
			concurrency: cfg.RequestConcurrency, pageSize: client.PageSize(RESTListPageSize)}
		c.reader = c.rest
	}
	c.st = collectorState{
		topics: map[string]bool{}, tasks: map[string]tracked{},
		expirations: map[string]float64{}, redeliveries: map[string]float64{},
		history: map[string]historyCounts{}, incidents: map[incidentKey]bool{},
		oldestInc: map[string]bool{}, jobs: map[string]bool{},
	}
	// Configured topics come first, so they are admitted before any topic
	// discovered in the engine.
	for _, t := range cfg.Topics {
		if c.topicLimit.Admit(t)[0] == t && t != labellimit.Other {
			c.st.topics[t] = true
		} else {
			c.st.topics[labellimit.Other] = true
		}
	}
	c.topicLimit.Flush()
	return c, nil
}

// Name implements poll.Collector.
func (c *Collector) Name() string { return "camunda" }

// Close releases the engine database's connections, in engine-database mode.
func (c *Collector) Close() {
	if c.db != nil {
		c.db.Close()
	}
}

// folder is a labellimit.Limiter or labellimit.Ranked: their folds are counted when the
// collection succeeds and forgotten when it fails.
type folder interface {
	Flush()
	Discard()
}

// collectionRun is the working set of one Collect call: the state it builds
// for the next collection, the series it emits, the label limiters it
// touched and the in-flight tasks it found for the joins.
type collectionRun struct {
	c         *Collector
	ctx       context.Context
	st        collectorState // the next state, committed on success
	engineNow time.Time
	out       []prometheus.Metric
	limiters  []folder // touched this collection: Flush or Discard
	// inflight are the listed tasks a worker touched, for the join;
	// truncated says the lists did not cover every such task, and
	// unwatched how many of them the lists left out.
	inflight  []correlate.Task
	truncated bool
	unwatched int64
}

func (run *collectionRun) gauge(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.GaugeValue, v, labels...))
}

func (run *collectionRun) counter(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.CounterValue, v, labels...))
}

// Collect implements poll.Collector.
func (c *Collector) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	taken := time.Now()
	run := &collectionRun{c: c, ctx: ctx, st: c.st.clone()}
	run.limiters = []folder{c.topicLimit, c.workerFold, c.incidentLimit, c.jobLimit}
	err := run.collect()
	for _, l := range run.limiters {
		if err != nil {
			l.Discard()
		} else {
			l.Flush()
		}
	}
	if err != nil {
		c.views.Withdraw(c.engine)
		return nil, err
	}
	run.st.engineNow = run.engineNow
	c.st = run.st
	c.views.Publish(&correlate.View{Engine: c.engine, Taken: taken, Tasks: run.inflight, Truncated: run.truncated,
		HideIdentifiers: !c.cfg.Status.ShowIdentifiers()})
	return run.out, nil
}

// collect reads the engine and emits every series, building the next state.
func (run *collectionRun) collect() error {
	c := run.c
	v, now, err := c.client.VersionAt(run.ctx)
	if err != nil {
		return err
	}
	if err := c.learnProduct(run.ctx, v); err != nil {
		return err
	}
	if c.rest != nil {
		c.rest.version = v
	}
	window := time.Duration(c.cfg.LateCommitWindow)
	rd, err := c.reader.read(run.ctx, readRequest{
		now: now, known: run.knownTopics(), otherKnown: run.st.topics[labellimit.Other], admit: run.admitTopic,
		budget: c.cfg.MaxListedTasks, history: run.st.cursor.request(now, window, c.cfg.MaxHistoryEntries),
	})
	if err != nil {
		return err
	}
	run.engineNow = rd.now
	run.gauge(catalog.CamundaEngineInfo, 1, c.engine, v, string(camunda.DetectFlavor(v, c.productName)))

	var entries []historyEntry
	run.st.cursor, entries = run.st.cursor.advance(rd.history, now, window)
	run.historyCut(rd.history.cut)
	fresh, recent := run.countHistory(entries)
	run.st.evidence = fresh
	run.trackUnlisted(rd, recent)

	run.truncated, run.unwatched = rd.truncated, rd.unwatched
	for _, topic := range run.knownTopics() {
		tr := rd.topics[topic]
		if tr == nil {
			// Admitted from the history log this collection: its tasks
			// came and went between two collections.
			tr = &topicRead{}
		}
		run.topic(topic, tr, fresh, recent, rd.noCreateTime)
	}
	if run.st.topics[labellimit.Other] {
		run.otherTopics(rd.other)
		run.emitHistory(labellimit.Other)
	}
	run.gauge(catalog.ExporterUnwatchedTasks, float64(run.unwatched), c.engine)
	run.counter(catalog.ExporterHistoryReadsCut, run.st.historyCuts, c.engine)
	run.incidents(rd.incidents)
	run.jobs(rd.jobs)
	return run.reportStatus(rd)
}

// learnProduct asks the engine for its telemetry product name, which tells
// the forks apart, once per engine version, answer or not: the endpoint may
// be forbidden for the exporter's user or missing in a fork.
func (c *Collector) learnProduct(ctx context.Context, version string) error {
	if c.productFor == version {
		return nil
	}
	name, err := c.client.ProductName(ctx)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		c.logger.Debug("camunda: no telemetry product name; detecting flavor from the version alone", "engine", c.engine, "error", err.Error())
	}
	c.productName, c.productFor = name, version
	return nil
}

// knownTopics are the topics reported so far, sorted, without "other".
func (run *collectionRun) knownTopics() []string {
	known := make([]string, 0, len(run.st.topics))
	for _, t := range sortedKeys(run.st.topics) {
		if t != labellimit.Other {
			known = append(known, t)
		}
	}
	return known
}

// admitTopic admits a topic the engine holds and the collector does not
// know yet: true gives it its own label, false folds it into "other".
func (run *collectionRun) admitTopic(topic string) bool {
	if run.c.topicLimit.Admit(topic)[0] == topic && topic != labellimit.Other {
		run.st.topics[topic] = true
		return true
	}
	run.st.topics[labellimit.Other] = true // remembered as the folded bucket
	return false
}

// topicLabel is the topic label of a topic named by a history entry,
// admitting it if it is new.
func (run *collectionRun) topicLabel(topic string) string {
	if run.st.topics[topic] && topic != labellimit.Other {
		return topic
	}
	if run.admitTopic(topic) {
		return topic
	}
	return labellimit.Other
}

// historyCut counts a history reading cut short by max_history_entries and
// logs when that starts: the failures and completions of that interval are
// undercounted.
func (run *collectionRun) historyCut(cut bool) {
	c := run.c
	if cut {
		run.st.historyCuts++
		if !c.historyCut {
			c.logger.Warn("camunda: more new history log entries than max_history_entries in one collection; failures and completions of this interval are undercounted (raise max_history_entries or collect more often)",
				"engine", c.engine, "max_history_entries", c.cfg.MaxHistoryEntries)
		}
	}
	c.historyCut = cut
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
