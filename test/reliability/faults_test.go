package reliability

import (
	"slices"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// faultedPolls is how many collections run while a fault lasts: enough to
// see that the failure is logged once, not once per poll.
const faultedPolls = 4

// families returns a predicate on series keys: the series of the given
// metric families.
func families(names ...string) func(string) bool {
	return func(key string) bool {
		name := key[:strings.IndexByte(key, '{')]
		for _, n := range names {
			if name == n {
				return true
			}
		}
		return false
	}
}

// ownedBy returns a predicate on series keys: the data series a collector
// emits.
func ownedBy(collectors ...string) func(string) bool {
	var fams []string
	for _, c := range collectors {
		switch c {
		case "idempotency":
			fams = append(fams, catalog.IdempotencyRecords, catalog.IdempotencyOldestRecordAge, catalog.IdempotencyStaleRecords,
				catalog.IdempotencyTransitions, catalog.IdempotencyConflicts, catalog.IdempotencyDuplicatesPrevented)
		case "idempotency_camunda":
			fams = append(fams, catalog.IdempotencyCompletedTaskOpen, catalog.IdempotencyInDoubt)
		case "idempotency_horizon":
			fams = append(fams, catalog.IdempotencyRetentionHorizon)
		case "inbox_horizon":
			fams = append(fams, catalog.InboxRetentionHorizon)
		case "processed_jobs":
			fams = append(fams, catalog.ProcessedJobs)
		case "processed_jobs_camunda":
			fams = append(fams, catalog.ProcessedJobTaskOpen)
		case "inbox":
			fams = append(fams, catalog.InboxMessages, catalog.InboxOldestMessageAge, catalog.InboxMessagesProcessed,
				catalog.InboxMessagesRetrying, catalog.InboxMessagesFailed, catalog.InboxOldestFailedAge)
		case "outbox":
			fams = append(fams, catalog.OutboxEventsPending, catalog.OutboxOldestPendingAge, catalog.OutboxEventsCreated,
				catalog.OutboxEventsPublished, catalog.OutboxPublishDelay, catalog.OutboxEventsFailed,
				catalog.OutboxOldestFailedAge, catalog.OutboxEventsRetrying)
		case "camunda":
			fams = append(fams, catalog.CamundaEngineInfo, catalog.CamundaEngineCapability, catalog.CamundaExternalTasks, catalog.CamundaExternalTaskOldestWaitingAge,
				catalog.CamundaExternalTaskLockExpirations, catalog.CamundaExternalTaskRedeliveries, catalog.CamundaExternalTaskFailures,
				catalog.CamundaExternalTaskCompletions, catalog.CamundaExternalTasksLockedByWorker, catalog.CamundaIncidents,
				catalog.CamundaIncidentOldestAge, catalog.ExporterUnwatchedTasks, catalog.ExporterHistoryReadsCut,
				catalog.CamundaExternalTaskDuration, catalog.CamundaExternalTaskOldestLockAge, catalog.CamundaExternalTaskWorkerIdle,
				catalog.CamundaExternalTaskOldestIncidentAge, catalog.CamundaExternalTaskBpmnErrors, catalog.CamundaExternalTasksEnded,
				catalog.CamundaExternalTaskFailuresByError)
		case "camunda_jobs":
			fams = append(fams, catalog.CamundaJobsRetriesExhausted, catalog.CamundaJobsExecutable, catalog.CamundaJobOldestExecutableAge,
				catalog.CamundaJobFailures, catalog.CamundaJobSuccesses, catalog.ExporterJobHistoryReadsCut, catalog.CamundaJobFailuresByError)
		case "camunda_processes":
			fams = append(fams, catalog.CamundaProcessInstances)
		case "camunda_history":
			fams = append(fams, catalog.CamundaHistoryCleanable, catalog.CamundaHistoryFinished, catalog.CamundaHistoryWithoutTTL,
				catalog.CamundaHistoryCleanupEnabled, catalog.CamundaHistoryCleanupJobs, catalog.CamundaHistoryCleanupJobsFailing,
				catalog.CamundaEngineTableBytes)
		default:
			panic("ownedBy: unknown collector " + c)
		}
	}
	return families(fams...)
}

// fault is one row of a fault matrix: what is done to a source, and what
// the exporter must show while it lasts.
type fault struct {
	name string
	// kind and source name the source the fault hits.
	kind, source string
	// step is the step the log line must name: "connect", or a collector.
	step string
	// also are further collectors the same fault fails, each with a log
	// line of its own (a table's retention horizon reads the table too).
	also []string
	// cause is the failure class the log line must give.
	cause string
	// down: the whole source is reported down (source_up 0); otherwise
	// only the step's collector (collector_up 0).
	down bool
	// gone are the data series that must be absent while the fault lasts;
	// every other series of the healthy collection before it must stay.
	gone func(key string) bool
	// inject makes the fault; clear ends it.
	inject, clear func(t *testing.T)
	// during, if set, runs the i-th faulted collection instead of a plain
	// one: a fault that strikes during a collection starts the collection
	// itself and returns its page.
	during func(t *testing.T, r *rig, i int) page
}

// run holds a fault against the exporter: a healthy collection first, then
// faultedPolls collections while the fault lasts, then the first
// collection after it ends. It checks, for each fault, what the issue
// asks: the log names the source, the step and the cause once (not every
// poll), the source or collector reports up 0, no stale data series is
// served, and the first good collection recovers every series.
func (f fault) run(t *testing.T, r *rig) {
	t.Helper()
	base := r.collect()
	if v, ok := base.get(catalog.ExporterSourceUp, "source", f.kind, "name", f.source); !ok || v != 1 {
		t.Fatalf("before the fault: source_up %v (present %v); logs:\n%s", v, ok, r.logs)
	}
	baseData := base.data()
	if len(baseData) == 0 {
		t.Fatal("no data series before the fault: the test would prove nothing")
	}
	if f.gone != nil {
		n := 0
		for k := range baseData {
			if f.gone(k) {
				n++
			}
		}
		if n == 0 {
			t.Fatal("none of the series the fault must remove exists before it: the test would prove nothing")
		}
	}
	from := r.logOffset()
	f.inject(t)
	cleared := false
	defer func() {
		if !cleared {
			f.clear(t)
		}
	}()
	for i := 0; i < faultedPolls; i++ {
		var p page
		if f.during != nil {
			p = f.during(t, r, i)
		} else {
			p = r.collect()
		}
		f.checkFaulted(t, i, baseData, p)
	}
	warns := r.logLines(from, "WARN")
	errs := r.logLines(from, "ERROR")
	steps := append([]string{f.step}, f.also...)
	if len(warns) != len(steps) || len(errs) != 0 {
		t.Errorf("%d warnings and %d errors for one fault over %d polls, want %d warning(s), one per collector it fails:\n%s", len(warns), len(errs), faultedPolls, len(steps), r.logs.String()[from:])
	} else {
		for i, w := range warns {
			if w.str("kind") != f.kind || w.str("name") != f.source || !slices.Contains(steps, w.str("collector")) || w.str("cause") != f.cause || w.str("err") == "" {
				t.Errorf("warning %d names kind=%q name=%q collector=%q cause=%q, want %s %s one of %v %q:\n%v",
					i, w.str("kind"), w.str("name"), w.str("collector"), w.str("cause"), f.kind, f.source, steps, f.cause, w)
			}
		}
	}

	f.clear(t)
	cleared = true
	from = r.logOffset()
	p := r.collect()
	if v, _ := p.get(catalog.ExporterSourceUp, "source", f.kind, "name", f.source); v != 1 {
		t.Fatalf("first collection after the fault: source_up %v; logs:\n%s", v, r.logs.String()[from:])
	}
	for k, v := range p.family(catalog.ExporterCollectorUp) {
		if v != 1 {
			t.Errorf("first collection after the fault: %s = %v", k, v)
		}
	}
	if v, ok := p.get(catalog.CamundaUp, "engine", f.source); f.kind == "camunda" && (!ok || v != 1) {
		t.Errorf("first collection after the fault: camunda_up %v", v)
	}
	if missing, extra := missingAndExtra(baseData, p.data()); len(missing)+len(extra) > 0 {
		t.Errorf("the first collection after the fault does not serve the series served before it:\nmissing %v\nextra %v", missing, extra)
	}
	infos := 0
	for _, l := range r.logLines(from, "INFO") {
		if strings.HasSuffix(l.str("msg"), "recovered") && l.str("kind") == f.kind && l.str("name") == f.source && l.str("cause") == f.cause {
			infos++
		}
	}
	if infos != len(steps) {
		t.Errorf("%d recovery lines for the end of the fault, want %d:\n%s", infos, len(steps), r.logs.String()[from:])
	}
	if w := r.logLines(from, "WARN"); len(w) != 0 {
		t.Errorf("warnings after the fault ended: %v", w)
	}
}

// checkFaulted checks one collection while the fault lasts.
func (f fault) checkFaulted(t *testing.T, i int, base, p page) {
	t.Helper()
	wantUp := 1.0
	if f.down {
		wantUp = 0
	}
	if v, _ := p.get(catalog.ExporterSourceUp, "source", f.kind, "name", f.source); v != wantUp {
		t.Errorf("poll %d: source_up %v, want %v", i, v, wantUp)
	}
	if f.kind == "camunda" {
		// camunda_up is the probe (GET /version): 0 only when the engine
		// does not answer it; a failing endpoint fails its collector alone.
		if v, ok := p.get(catalog.CamundaUp, "engine", f.source); !ok || v != wantUp {
			t.Errorf("poll %d: camunda_up %v (present %v), want %v", i, v, ok, wantUp)
		}
	}
	for _, step := range append([]string{f.step}, f.also...) {
		if step == vocab.CollectorConnect {
			continue
		}
		if v, ok := p.get(catalog.ExporterCollectorUp, "source", f.kind, "name", f.source, "collector", step); ok && v != 0 {
			t.Errorf("poll %d: collector_up{%s} %v, want 0 or absent", i, step, v)
		} else if !ok && !f.down {
			t.Errorf("poll %d: collector_up{%s} absent while the source is up", i, step)
		}
	}
	data := p.data()
	for k := range data {
		if f.gone(k) {
			t.Errorf("poll %d: stale series served during the fault: %s", i, k)
		}
	}
	for k := range base {
		if _, ok := data[k]; !ok && !f.gone(k) {
			t.Errorf("poll %d: series of a healthy part missing during the fault: %s", i, k)
		}
	}
}
