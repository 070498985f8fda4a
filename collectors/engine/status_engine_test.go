//go:build !pgonly

package engine_test

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/internal/status"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// statusLists are the status page's lists of the engine's last collection,
// by kind.
func (e *camExporter) statusLists() map[string]collectors.List {
	e.t.Helper()
	snap := e.set.Sources()[0].Current()
	if snap == nil {
		e.t.Fatal("not collected")
	}
	out := map[string]collectors.List{}
	for _, l := range snap.Lists {
		out[l.Kind] = l
	}
	return out
}

// engineItem renders an engine item without its age (the two modes take
// the engine's time from different clocks).
func engineItem(it collectors.Item) string {
	since := "-"
	if it.Since != nil {
		since = it.Since.UTC().Format(time.RFC3339Nano)
	}
	s := strings.Join([]string{it.Engine, it.Topic, it.ExternalTaskID, it.ProcessInstanceID, it.BusinessKey, it.ActivityID, it.WorkerID, it.TaskState, since}, " ")
	if it.ErrorSignature != "" {
		// A failure group: its signature, count, workers and latest
		// failure, all from the history log (the same in both modes).
		s += fmt.Sprintf(" %q x%d workers=%d job=%s key=%s last=%s", it.ErrorSignature, it.Count, it.DistinctWorkers, it.JobID, it.ProcessDefinitionKey, it.LastSeen.UTC().Format(time.RFC3339Nano))
	}
	return s
}

// sameStatusItems checks that the two modes list the same tasks of the
// topics own accepts, with the same identifiers and times. A redelivery's
// time is the engine time of the collection that counted it, which the two
// modes read from different clocks one after the other: those times may
// differ by the tolerance of the modes' ages (ageTolerance).
func sameStatusItems(t *testing.T, rest, db *camExporter, own func(string, map[string]string) bool) {
	t.Helper()
	tolerance := time.Duration(ageTolerance(rest.maxSpan) * float64(time.Second))
	// items are the listed tasks by kind: each item rendered without a
	// redelivery's time, which is returned beside it.
	items := func(e *camExporter) map[string]map[string]time.Time {
		out := map[string]map[string]time.Time{}
		for kind, l := range e.statusLists() {
			out[kind] = map[string]time.Time{}
			for _, it := range l.Items {
				// Both labels, as a per-topic series has them (own also
				// accepts the engine-wide series, which have one label).
				// The groups of jobs and incidents name a process
				// definition instead.
				if !own("", map[string]string{"engine": it.Engine, "topic": it.Topic, "process_definition_key": it.ProcessDefinitionKey}) {
					continue
				}
				var at time.Time
				if kind == vocab.KindRedelivered && it.Since != nil {
					at, it.Since = *it.Since, nil
				}
				out[kind][engineItem(it)] = at
			}
		}
		return out
	}
	a, b := items(rest), items(db)
	for _, kind := range status.Kinds() {
		var diff []string
		for it, at := range a[kind] {
			bt, ok := b[kind][it]
			switch {
			case !ok:
				diff = append(diff, "REST mode only: "+it)
			case bt.Sub(at) > tolerance || at.Sub(bt) > tolerance:
				diff = append(diff, fmt.Sprintf("redelivered at %s (REST mode) and %s (engine-database mode), more than %s apart: %s", at, bt, tolerance, it))
			}
		}
		for it := range b[kind] {
			if _, ok := a[kind][it]; !ok {
				diff = append(diff, "engine-database mode only: "+it)
			}
		}
		if len(diff) > 0 {
			sort.Strings(diff)
			t.Errorf("status list %s differs:\n  %s", kind, strings.Join(diff, "\n  "))
		}
	}
}

// scenarioStatusLists drives tasks into the states the engine's lists name
// (retries exhausted, lock lapsed, redelivered) and checks that the lists
// name exactly those tasks with the identifiers an operator needs: topic,
// task and process instance id, the instance's business key, activity,
// worker, and since when by the engine's own times. The twin in
// engine-database mode must list the same (camExporter.collect).
func scenarioStatusLists(s *scenario) {
	t := s.t
	bk := map[string]string{} // process instance -> business key
	for i := 1; i <= 3; i++ {
		pi, err := s.c.StartProcess(s.ctx, s.key, fmt.Sprintf("order-%s-%d", s.key, i), nil)
		s.ok(err)
		bk[pi.ID] = pi.BusinessKey
	}
	w1, w2 := s.worker("w1"), s.worker("w2")
	tasks := s.fetch(w1, shortLock, 3)
	a, b, c := tasks[0], tasks[1], tasks[2]
	s.ok(w1.Failure(s.ctx, a.ID, 0, 0, "SECRET-ERROR-MESSAGE"))
	var incidents []struct {
		Configuration     string
		IncidentTimestamp string
	}
	s.ok(s.c.Get(s.ctx, "/incident", url.Values{"incidentType": {"failedExternalTask"}, "processDefinitionKeyIn": {s.key}}, &incidents))
	if len(incidents) != 1 || incidents[0].Configuration != a.ID {
		t.Fatalf("engine: incidents %+v, want one for task %s", incidents, a.ID)
	}
	failedAt, err := engineclient.ParseTime(incidents[0].IncidentTimestamp)
	s.ok(err)
	mine := func(kind string) []string {
		t.Helper()
		var out []string
		for _, it := range s.exp.statusLists()[kind].Items {
			if it.Topic == s.topic {
				out = append(out, engineItem(it))
			}
		}
		sort.Strings(out)
		return out
	}
	want := func(step, kind string, items ...string) {
		t.Helper()
		sort.Strings(items)
		if got := mine(kind); strings.Join(got, "\n") != strings.Join(items, "\n") {
			t.Errorf("%s: %s lists\n  %s\nwant\n  %s", step, kind, strings.Join(got, "\n  "), strings.Join(items, "\n  "))
		}
	}
	item := func(tk engineclient.ExternalTask, worker, state string, since time.Time) string {
		return engineItem(collectors.Item{Engine: "e1", Topic: s.topic, ExternalTaskID: tk.ID, ProcessInstanceID: tk.ProcessInstanceID,
			BusinessKey: bk[tk.ProcessInstanceID], ActivityID: "task_1", WorkerID: worker, TaskState: state, Since: &since})
	}

	s.exp.collect()
	want("a failed with no retries left", vocab.KindRetriesExhausted, item(a, "w1", vocab.StateRetriesExhausted, failedAt))
	want("b and c held by w1", vocab.KindLockExpired)

	sleepPast(lockExpiry(t, b))
	s.exp.collect()
	want("the locks of b and c lapsed", vocab.KindLockExpired,
		item(b, "w1", vocab.StateLockExpired, lockExpiry(t, b)), item(c, "w1", vocab.StateLockExpired, lockExpiry(t, c)))
	want("nothing redelivered yet", vocab.KindRedelivered)

	// w2 fetches b and c again: both are redelivered, neither lapsed now.
	again := s.fetch(w2, time.Minute, 2)
	s.exp.collect()
	want("b and c redelivered to w2", vocab.KindLockExpired)
	got := mine(vocab.KindRedelivered)
	if len(got) != 2 || len(again) != 2 {
		t.Fatalf("redelivered: %v", got)
	}
	for _, line := range got {
		if !strings.Contains(line, " w2 locked ") || (!strings.Contains(line, b.ID) && !strings.Contains(line, c.ID)) {
			t.Errorf("redelivered item %q, want b or c held by w2", line)
		}
	}
	// Never an error message, except as the signature of a failure group
	// (docs/failure-groups.md), and only there.
	for _, l := range s.exp.statusLists() {
		for _, it := range l.Items {
			if l.Kind == vocab.KindTaskFailureGroups || l.Kind == vocab.KindIncidentGroups {
				it.ErrorSignature = ""
			}
			if strings.Contains(fmt.Sprint(it), "SECRET") {
				t.Errorf("an item carries the error message: %+v", it)
			}
		}
	}

	// The engine's identifiers switched off: counts only, in both modes.
	hidden := newCamundaExporter(t, s.u.config(s.topic, "    status: {identifiers: false}\n"))
	hidden.collect()
	for kind, l := range hidden.statusLists() {
		if !l.IdentifiersHidden || len(l.Items) != 0 {
			t.Errorf("%s with identifiers off: %+v", kind, l)
		}
	}
	if l := hidden.statusLists()[vocab.KindRetriesExhausted]; l.Total < 1 {
		t.Errorf("retries_exhausted total %d with identifiers off, want at least this scenario's 1", l.Total)
	}
}
