package engine

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/histogram"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// externalTasksCollector is the "camunda" collector of an engine: it emits
// the external-task metrics, incidents and camunda_engine_info. It reads
// the engine through the engine's reader (reading.Reader): the REST API
// (collectors/engine/rest, the default) or, when camunda[].database is
// configured, the engine's own tables (collectors/engine/enginedb). What it
// does with what it read is the same code for both: topic admission
// (topics.go), the state partition (tasks.go), the lock tracking
// (locks.go), the counters from the history log (history.go), incidents
// (incidents.go). The rules, the request budget and what cannot be known
// are documented in docs/camunda-states.md.
//
// State between collections (tracked tasks, counters, the history cursor,
// known topics) is built as a new value during a collection and replaces
// the old one only when the whole collection succeeded, so a failed
// collection leaves the state as it was.
type externalTasksCollector struct {
	e     *Engine
	views *correlate.Registry // nil: no join

	topicLimit    *labellimit.Limiter // topic label of every per-topic metric
	workerFold    *labellimit.Ranked  // worker_id per topic, admitted anew in every collection
	incidentLimit *labellimit.Limiter // (incident_type, process_definition_key, activity_id)

	// descs are the descriptors of every metric the collector emits;
	// tenanted the families whose topic key becomes the tenant and topic
	// labels (tenant_label on, tenants.go).
	descs    catalog.Descs
	tenanted tenantLabels

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

	// models are the process models read so far (models.go), for the
	// activity stream below history level full.
	models *models

	// quiet: the next successful collection counts no lock expiration or
	// redelivery (the first after a restore without resume, state.go).
	quiet bool
	// forgetAfter is label_value_forget_after (0: never).
	forgetAfter time.Duration
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
	// cursor where the external task log reading stands (history level
	// full), actCursor where the activity stream's stands (activity,
	// audit); the one not read is reset.
	history   map[string]historyCounts
	cursor    historyCursor
	actCursor historyCursor
	// unattributed: the activity stream counted an outcome of a task whose
	// topic is unknown (activities.go).
	unattributed bool
	// open are the counts of each topic label at the last collection, and
	// ended the tasks seen open and then gone per topic label (ended.go).
	open  map[string]reading.TopicCounts
	ended map[string]float64
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
	incidents map[reading.IncidentKey]bool
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
	// firstSeen are the engine times of the first collection that saw each
	// fetchable task the reader could not date (tasks.go, firstSeen), kept
	// while a collection lists it as undated or in flight.
	firstSeen map[string]time.Time
}

func (s collectorState) clone() collectorState {
	return collectorState{
		engineNow:    s.engineNow,
		topics:       cloneMap(s.topics),
		tasks:        make(map[string]tracked, len(s.tasks)), // about as many in flight as last time
		expirations:  cloneMap(s.expirations),
		redeliveries: cloneMap(s.redeliveries),
		history:      cloneMap(s.history),
		cursor:       s.cursor,    // advance returns a new cursor, never changes one
		actCursor:    s.actCursor, // likewise
		unattributed: s.unattributed,
		open:         cloneMap(s.open),
		ended:        cloneMap(s.ended),
		evidence:     s.evidence, // replaced, never changed
		historyCuts:  s.historyCuts,
		incidents:    cloneMap(s.incidents),
		oldestInc:    cloneMap(s.oldestInc),
		durations:    cloneHists(s.durations),
		holders:      map[topicWorker]time.Time{}, // rebuilt by every collection
		usedCatches:  cloneMap(s.usedCatches),
		firstSeen:    map[string]time.Time{}, // rebuilt by every collection

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

func newExternalTasksCollector(e *Engine, o Options) *externalTasksCollector {
	cfg := e.cfg
	c := &externalTasksCollector{
		e: e, views: o.Views,
		topicLimit:    labellimit.NewLimiter(o.Folds, catalog.CamundaExternalTasks, cfg.LabelValueLimit),
		workerFold:    labellimit.NewRanked(o.Folds, catalog.CamundaExternalTasksLockedByWorker, cfg.WorkerIDLimit),
		incidentLimit: labellimit.NewLimiter(o.Folds, catalog.CamundaIncidents, cfg.LabelValueLimit),
		descs: newDescs(cfg.TenantLabel, catalog.CamundaEngineInfo, catalog.CamundaEngineCapability, catalog.CamundaExternalTasks, catalog.CamundaExternalTaskOldestWaitingAge,
			catalog.CamundaExternalTaskLockExpirations, catalog.CamundaExternalTaskRedeliveries, catalog.CamundaExternalTaskFailures,
			catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTasksLockedByWorker, catalog.CamundaIncidents,
			catalog.CamundaIncidentOldestAge, catalog.ExporterUnwatchedTasks, catalog.ExporterHistoryReadsCut,
			catalog.CamundaExternalTaskDuration, catalog.CamundaExternalTaskOldestLockAge, catalog.CamundaExternalTaskWorkerIdle,
			catalog.CamundaExternalTaskOldestIncidentAge, catalog.CamundaExternalTaskBpmnErrors, catalog.CamundaExternalTasksEnded,
			catalog.CamundaExternalTaskFailuresByError),
		creations:   map[string]int64{},
		models:      newModels(),
		forgetAfter: e.forgetAfter(),
	}
	c.topicLimit.SetForgetAfter(c.forgetAfter)
	c.incidentLimit.SetForgetAfter(c.forgetAfter)
	c.tenanted = newTenantLabels(cfg.TenantLabel, slices.Collect(maps.Keys(c.descs))...)
	c.st = collectorState{
		topics: map[string]bool{}, tasks: map[string]tracked{},
		expirations: map[string]float64{}, redeliveries: map[string]float64{},
		history: map[string]historyCounts{}, incidents: map[reading.IncidentKey]bool{},
		oldestInc: map[string]bool{}, durations: map[string]histogram.Dual{}, holders: map[topicWorker]time.Time{},
		usedCatches: map[string]time.Time{}, open: map[string]reading.TopicCounts{}, ended: map[string]float64{}, firstSeen: map[string]time.Time{},
		failureGroups: newFailureGroups(cfg.FailureSignatures, cfg.FailureSignatureLimit),
	}
	// Configured topics are reserved: always reported, whatever the limit
	// and whichever topics the engine held first.
	for _, t := range cfg.Topics {
		if cfg.TenantLabel {
			// A configured topic is reported for tasks without a tenant.
			t = reading.TenantKey("", t)
		}
		if t != labellimit.Other {
			c.topicLimit.Reserve(t)
			c.st.topics[t] = true
		} else {
			c.st.topics[labellimit.Other] = true
		}
	}
	c.topicLimit.Flush()
	return c
}

// Name implements collectors.Collector.
func (c *externalTasksCollector) Name() string { return nameTasks }

// collectionRun is the working set of one Collect call: the state it builds
// for the next collection, the series it emits, the label limiters it
// touched and the in-flight tasks it found for the joins.
type collectionRun struct {
	c   *externalTasksCollector
	ctx context.Context
	// sink receives the status page's lists; nil when the page is off.
	sink *collectors.Sink
	st   collectorState // the next state, committed on success
	// at is what the collection's probe read; engineNow the engine's clock
	// the reading returned (the database's in engine-database mode).
	at        reading.Probe
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
	// vanished counts per topic the tasks the previous collection listed
	// that no list holds now (ended.go).
	vanished map[string]int64
	// quiet: lock events are not counted (state.go).
	quiet bool
}

func (run *collectionRun) gauge(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.GaugeValue, v, run.c.topicLabels(name, labels)...))
}

func (run *collectionRun) counter(name string, v float64, labels ...string) {
	run.out = append(run.out, prometheus.MustNewConstMetric(run.c.descs.Get(name), prometheus.CounterValue, v, run.c.topicLabels(name, labels)...))
}

// Collect implements collectors.Collector.
func (c *externalTasksCollector) Collect(ctx context.Context, sink *collectors.Sink) ([]prometheus.Metric, error) {
	taken := time.Now()
	run := &collectionRun{c: c, ctx: ctx, sink: sink, st: c.st.clone(), quiet: c.quiet}
	err := run.collect()
	settle(err, c.topicLimit, c.workerFold, c.incidentLimit)
	if err != nil {
		c.views.Withdraw(c.e.name)
		return nil, err
	}
	run.st.engineNow = run.engineNow
	c.st = run.st
	c.quiet = false
	c.commitCreations(run.ledger)
	c.forget(run.engineNow)
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
	now := at.Now
	window := time.Duration(e.cfg.LateCommitWindow)
	// Only the status page shows business keys, and a page whose
	// identifiers are off keeps no item (collectors.Sink.Add).
	keys := run.sink != nil && e.cfg.Status.ShowIdentifiers()
	rq := reading.TasksRequest{Probe: at, Topics: run.topicChoice(), Budget: e.cfg.MaxListedTasks,
		IncidentMessages: run.st.failureGroups.by != nil && run.sink != nil,
		BusinessKeys:     keys,
		IncidentTypes:    sortedKeys(run.st.oldestInc),
		RecentLapses:     run.recentLapses}
	// The stream the history level has (levels.go); the other cursor is
	// reset, so a stream that starts later resumes from the collection
	// before it.
	prev := run.c.st.engineNow
	switch {
	case at.Level.ReadsTaskLog():
		run.st.cursor, run.st.actCursor = run.st.cursor.resume(prev), historyCursor{}
		rq.History = run.st.cursor.request(now, window, e.cfg.MaxHistoryEntries)
	case at.Level.ReadsActivities():
		run.st.cursor, run.st.actCursor = historyCursor{}, run.st.actCursor.resume(prev)
		rq.Activities = run.st.actCursor.request(now, window, e.cfg.MaxHistoryEntries)
		rq.ActTypes = run.c.models.activityTypes()
	default:
		run.st.cursor, run.st.actCursor = historyCursor{}, historyCursor{}
	}
	rd, err := e.reader.ReadTasks(run.ctx, rq)
	if err != nil {
		return err
	}
	run.engineNow = rd.Now
	run.gauge(catalog.CamundaEngineInfo, 1, e.name, at.Version, string(e.flavor(at.Version)), at.Level.String())

	fresh, recent, err := run.history(rd, rq)
	if err != nil {
		return err
	}
	run.st.evidence = fresh
	run.trackUnlisted(rd, recent)

	run.truncated, run.unwatched = rd.Truncated, rd.Unwatched
	// A topic holding tasks is seen: it keeps its label
	// (label_value_forget_after).
	for topic, tr := range rd.Topics {
		if tr.Counts.Total > 0 && run.st.topics[topic] {
			run.c.topicLimit.Admit(topic)
		}
	}
	run.inflight = slices.Grow(run.inflight, rd.Listed())
	for _, topic := range run.knownTopics() {
		tr := rd.Topics[topic]
		if tr == nil {
			// Admitted from the history this collection: its tasks came
			// and went between two collections.
			tr = &reading.TopicRead{}
		}
		run.topic(topic, tr, rd, fresh, recent)
	}
	if run.st.topics[labellimit.Other] {
		o := rd.OtherCounts()
		run.otherTopics(o)
		run.ended(labellimit.Other, o, 0, rd.Truncated)
		run.emitHistory(labellimit.Other)
	}
	if run.st.unattributed && at.Level.HasOutcomes() {
		run.emitHistory(unattributed)
	}
	run.keepFirstSeen()
	run.emitCapabilities(rd)
	run.gauge(catalog.ExporterUnwatchedTasks, float64(run.unwatched), e.name)
	run.counter(catalog.ExporterHistoryReadsCut, run.st.historyCuts, e.name)
	run.incidents(rd.Incidents)
	run.out = append(run.out, run.st.failureGroups.metrics(run.c.descs.Get(catalog.CamundaExternalTaskFailuresByError), func(key string) []string {
		return run.c.topicLabels(catalog.CamundaExternalTaskFailuresByError, []string{e.name, key})
	})...)
	return run.reportStatus(rd)
}

// recentLapses are the tracked tasks whose lock expires within
// LapsedMargin of this collection's reference time (mayBeSkewed), by id.
func (run *collectionRun) recentLapses() []reading.Lapse {
	var out []reading.Lapse
	for id, t := range run.c.st.tasks {
		if mayBeSkewed(t, run.at.Now) {
			out = append(out, reading.Lapse{ID: id, Exp: t.exp})
		}
	}
	slices.SortFunc(out, func(a, b reading.Lapse) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// history counts the fresh entries of the stream the history level has:
// the external task log at full, the activity instances at activity and
// audit (activities.go), nothing below. It returns what the entries say of
// each task for the lock tracking (fresh, and over two collections recent;
// only the log names tasks).
func (run *collectionRun) history(rd *reading.TasksRead, rq reading.TasksRequest) (fresh, recent map[string]*taskEvidence, err error) {
	now, window := run.at.Now, time.Duration(run.c.e.cfg.LateCommitWindow)
	switch {
	case run.at.Level.ReadsTaskLog():
		var entries []reading.HistoryEntry
		var lost bool
		baseline := rq.History.First
		run.st.cursor, entries, lost = run.st.cursor.advance(rd.History, now, window)
		if baseline {
			run.trackDurations(rd.History.Entries, true)
		} else {
			run.trackDurations(entries, false)
		}
		run.historyCut(lost)
		fresh, recent = run.countHistory(entries, rd.BPMN)
		pruneCatches(run.st.usedCatches, run.st.cursor.request(now, window, 0).From)
	case run.at.Level.ReadsActivities():
		var acts []reading.ActivityEntry
		var lost bool
		run.st.actCursor, acts, lost = advanceCursor(run.st.actCursor, rd.Activities.Entries, rd.Activities.Cut, now, window)
		run.historyCut(lost)
		var listed []string
		for _, tr := range rd.Topics {
			for _, o := range append(append([]reading.TaskObs(nil), tr.Locked...), tr.Lapsed...) {
				listed = append(listed, o.DefID)
			}
		}
		entries, ev, err := run.activityOutcomes(acts, listed)
		if err != nil {
			return nil, nil, err
		}
		fresh, recent = run.countHistory(entries, ev)
		pruneCatches(run.st.usedCatches, run.st.actCursor.request(now, window, 0).From)
	default:
		run.historyCut(false)
		fresh, recent = map[string]*taskEvidence{}, map[string]*taskEvidence{}
		run.activity = map[topicWorker]time.Time{}
	}
	return fresh, recent, nil
}

// historyCut counts a history reading cut short by max_history_entries
// before it reached the previous reading (advanceCursor) and logs when that
// starts: the failures and completions of that interval are undercounted.
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
