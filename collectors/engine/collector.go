package engine

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/correlate"
	"github.com/workflow-exporter/workflow-exporter/collectors/histogram"
	"github.com/workflow-exporter/workflow-exporter/collectors/labellimit"
)

// Collector is the "camunda" collector of an engine: it emits the
// external-task metrics, incidents and camunda_engine_info. It reads the
// engine through the engine's reader (reader.go): the REST API (rest.go,
// the default) or, when camunda[].database is configured, the engine's own
// tables (db.go). What it does with what it read is the same code for both:
// topic admission (topics.go), the state partition (tasks.go), the lock
// tracking (locks.go), the counters from the history log (history.go),
// incidents (incidents.go). The rules,
// the request budget and what cannot be known are documented in
// docs/camunda-states.md.
//
// State between collections (tracked tasks, counters, the history cursor,
// known topics) is built as a new value during a collection and replaces
// the old one only when the whole collection succeeded, so a failed
// collection leaves the state as it was.
type Collector struct {
	e     *Engine
	views *correlate.Registry // nil: no join

	topicLimit    *labellimit.Limiter // topic label of every per-topic metric
	workerFold    *labellimit.Ranked  // worker_id per topic, admitted anew in every collection
	incidentLimit *labellimit.Limiter // (incident_type, process_definition_key, activity_id)

	// descs are the descriptors of every metric the collector emits.
	descs catalog.Descs

	st collectorState

	// historyCut remembers that the last collection's history reading was
	// cut by max_history_entries, so the warning is logged when that starts.
	historyCut bool

	// creations are the creation times (Unix nanoseconds) of the tasks
	// whose creation entry the history stream showed, by task id, until
	// their success or deletion (durations.go). Too large to copy per
	// collection, it changes through a ledger applied on success;
	// creationsFull remembers that the last collection met maxCreations.
	creations     map[string]int64
	creationsFull bool
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
	// durations are the duration histograms per topic label.
	durations map[string]histogram.Dual
	// holders are the workers holding locks per topic label, with the
	// time their idleness counts from (tasks.go, emitLockAges).
	holders map[topicWorker]time.Time
	// failureGroups are the failures by topic label and signature
	// (failures.go); by is nil when failure_signatures is off.
	failureGroups failureGroups
	// usedCatches are the error catch events paired with a deletion entry,
	// by id, with their start (bpmn.go).
	usedCatches map[string]time.Time
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
		durations:    cloneHists(s.durations),
		holders:      map[topicWorker]time.Time{}, // rebuilt by every collection
		usedCatches:  cloneMap(s.usedCatches),

		failureGroups: s.failureGroups.clone(),
	}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newCollector(e *Engine, o Options) *Collector {
	cfg := e.cfg
	c := &Collector{
		e: e, views: o.Views,
		topicLimit:    labellimit.NewLimiter(o.Folds, catalog.CamundaExternalTasks, cfg.LabelValueLimit),
		workerFold:    labellimit.NewRanked(o.Folds, catalog.CamundaExternalTasksLockedByWorker, cfg.WorkerIDLimit),
		incidentLimit: labellimit.NewLimiter(o.Folds, catalog.CamundaIncidents, cfg.LabelValueLimit),
		descs: catalog.NewDescs(catalog.CamundaEngineInfo, catalog.CamundaExternalTasks, catalog.CamundaExternalTaskOldestWaitingAge,
			catalog.CamundaExternalTaskLockExpirations, catalog.CamundaExternalTaskRedeliveries, catalog.CamundaExternalTaskFailures,
			catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTasksLockedByWorker, catalog.CamundaIncidents,
			catalog.CamundaIncidentOldestAge, catalog.ExporterUnwatchedTasks, catalog.ExporterHistoryReadsCut,
			catalog.CamundaExternalTaskDuration, catalog.CamundaExternalTaskOldestLockAge, catalog.CamundaExternalTaskWorkerIdle,
			catalog.CamundaExternalTaskOldestIncidentAge, catalog.CamundaExternalTaskBpmnErrors, catalog.CamundaExternalTaskFailuresByError),
		creations: map[string]int64{},
	}
	c.st = collectorState{
		topics: map[string]bool{}, tasks: map[string]tracked{},
		expirations: map[string]float64{}, redeliveries: map[string]float64{},
		history: map[string]historyCounts{}, incidents: map[incidentKey]bool{},
		oldestInc: map[string]bool{}, durations: map[string]histogram.Dual{}, holders: map[topicWorker]time.Time{},
		usedCatches:   map[string]time.Time{},
		failureGroups: newFailureGroups(cfg.FailureSignatures, cfg.FailureSignatureLimit),
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
	return c
}

// Name implements collectors.Collector.
func (c *Collector) Name() string { return nameTasks }

// collectionRun is the working set of one Collect call: the state it builds
// for the next collection, the series it emits, the label limiters it
// touched and the in-flight tasks it found for the joins.
type collectionRun struct {
	c   *Collector
	ctx context.Context
	st  collectorState // the next state, committed on success
	// at is what the collection's probe read; engineNow the engine's clock
	// the reading returned (the database's in engine-database mode).
	at        probeRead
	engineNow time.Time
	out       []prometheus.Metric
	// inflight are the listed tasks a worker touched, for the join;
	// truncated says the lists did not cover every such task, and
	// unwatched how many of them the lists left out.
	inflight  []correlate.Task
	truncated bool
	unwatched int64
	// ledger is what this collection does to the remembered creation
	// times, applied on success.
	ledger creationLedger
	// activity is each worker's latest success or failure entry per topic
	// label in this collection's fresh history entries.
	activity map[topicWorker]time.Time
}

func (run *collectionRun) gauge(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.GaugeValue, v, labels...))
}

func (run *collectionRun) counter(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.CounterValue, v, labels...))
}

// Collect implements collectors.Collector.
func (c *Collector) Collect(ctx context.Context) ([]prometheus.Metric, error) {
	taken := time.Now()
	run := &collectionRun{c: c, ctx: ctx, st: c.st.clone()}
	err := run.collect()
	settle(err, c.topicLimit, c.workerFold, c.incidentLimit)
	if err != nil {
		c.views.Withdraw(c.e.name)
		return nil, err
	}
	run.st.engineNow = run.engineNow
	c.st = run.st
	c.commitCreations(run.ledger)
	c.views.Publish(&correlate.View{Engine: c.e.name, Taken: taken, Tasks: run.inflight, Truncated: run.truncated,
		HideIdentifiers: !c.e.cfg.Status.ShowIdentifiers()})
	return run.out, nil
}

// collect reads the engine and emits every series, building the next state.
func (run *collectionRun) collect() error {
	e := run.c.e
	at, err := e.probed()
	if err != nil {
		return err
	}
	run.at = at
	now := at.now
	window := time.Duration(e.cfg.LateCommitWindow)
	rd, err := e.reader.readTasks(run.ctx, tasksRequest{probeRead: at, topics: run.topicChoice(),
		budget: e.cfg.MaxListedTasks, history: run.st.cursor.request(now, window, e.cfg.MaxHistoryEntries),
		incidentMessages: run.st.failureGroups.by != nil && collectors.SinkFrom(run.ctx) != nil})
	if err != nil {
		return err
	}
	run.engineNow = rd.now
	run.gauge(catalog.CamundaEngineInfo, 1, e.name, at.version, string(camunda.DetectFlavor(at.version, e.productName)))

	var entries []historyEntry
	baseline := !run.st.cursor.started
	run.st.cursor, entries = run.st.cursor.advance(rd.history, now, window)
	if baseline {
		run.trackDurations(rd.history.entries, true)
	} else {
		run.trackDurations(entries, false)
	}
	run.historyCut(rd.history.cut)
	fresh, recent := run.countHistory(entries, rd.bpmn)
	pruneCatches(run.st.usedCatches, run.st.cursor.request(now, window, 0).from)
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
		run.topic(topic, tr, rd, fresh, recent)
	}
	if run.st.topics[labellimit.Other] {
		run.otherTopics(rd.otherCounts())
		run.emitHistory(labellimit.Other)
	}
	run.gauge(catalog.ExporterUnwatchedTasks, float64(run.unwatched), e.name)
	run.counter(catalog.ExporterHistoryReadsCut, run.st.historyCuts, e.name)
	run.incidents(rd.incidents)
	run.out = append(run.out, run.st.failureGroups.metrics(run.c.descs.Get(catalog.CamundaExternalTaskFailuresByError), e.name)...)
	return run.reportStatus(rd)
}

// historyCut counts a history reading cut short by max_history_entries and
// logs when that starts: the failures and completions of that interval are
// undercounted.
func (run *collectionRun) historyCut(cut bool) {
	c := run.c
	if cut {
		run.st.historyCuts++
		if !c.historyCut {
			c.e.logger.Warn("camunda: more new history log entries than max_history_entries in one collection; failures and completions of this interval are undercounted (raise max_history_entries or collect more often)",
				"engine", c.e.name, "max_history_entries", c.e.cfg.MaxHistoryEntries)
		}
	}
	c.historyCut = cut
}

// sortedKeys returns m's keys in order, for output that does not depend on
// map iteration.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
