//go:build !pgonly

package engine_test

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
)

// ttlZeroProcess is the scenario's process with a history time to live of
// 0 days: an instance is cleanable as soon as it ends.
func ttlZeroProcess(key, topic string) []byte {
	return []byte(strings.Replace(string(engineclient.ExternalTaskProcess(key, topic)), `camunda:historyTimeToLive="P1D"`, `camunda:historyTimeToLive="P0D"`, 1))
}

// scenarioHistoryCleanup: finished instances of a definition with a time to
// live of 0 are cleanable at once, those of a definition without one never
// (camunda_history_process_instances_without_ttl); the cleanup, triggered
// and run, removes the cleanable ones and leaves a job; the twin in
// engine-database mode reads the same, and the engine's largest tables.
func scenarioHistoryCleanup(s *scenario) {
	t := s.t
	noTTL := s.key + "_nottl"
	bpmn := strings.Replace(string(engineclient.ExternalTaskProcess(noTTL, s.topic)), ` camunda:historyTimeToLive="P1D"`, "", 1)
	if _, err := s.c.Deploy(s.ctx, noTTL, map[string][]byte{noTTL + ".bpmn": []byte(bpmn)}); err != nil {
		t.Fatal(err)
	}
	s.start(3)
	for range 2 {
		_, err := s.c.StartProcess(s.ctx, noTTL, "", nil)
		s.ok(err)
	}
	w := s.worker("w1")
	for _, tk := range s.fetch(w, time.Minute, 5) {
		s.ok(w.Complete(s.ctx, tk.ID, nil))
	}
	// Its own exporters: the history is read at most once per interval
	// (10m by default), here at every collection.
	cfg := s.u.config(s.topic, "    history_cleanup: {interval: 1ms}\n")
	rest := newCamundaExporter(t, cfg)
	exps := []*camExporter{rest}
	if s.exp.twin != nil {
		exps = append(exps, newCamundaExporter(t, cfg+s.dbConfig))
	}
	want := func(step string, e *camExporter, name, key string, v float64) {
		t.Helper()
		labels := map[string]string{"engine": "e1"}
		if key != "" {
			labels["process_definition_key"] = key
		}
		if got := e.must(name, labels); got != v {
			t.Errorf("%s: %s%v = %v, want %v", step, name, labels, got, v)
		}
	}
	for i, e := range exps {
		e.collect()
		want("finished", e, catalog.CamundaHistoryFinished, s.key, 3)
		want("finished", e, catalog.CamundaHistoryCleanable, s.key, 3)
		want("finished", e, catalog.CamundaHistoryWithoutTTL, s.key, 0)
		want("finished", e, catalog.CamundaHistoryFinished, noTTL, 2)
		want("finished", e, catalog.CamundaHistoryCleanable, noTTL, 0)
		want("finished", e, catalog.CamundaHistoryWithoutTTL, noTTL, 2)
		want("finished", e, catalog.CamundaHistoryCleanupEnabled, "", 1)
		if i == 1 {
			sizes := e.samples(catalog.CamundaEngineTableBytes)
			if len(sizes) == 0 || len(sizes) > 10 {
				t.Errorf("engine-database mode: %d table sizes, want 1 to 10", len(sizes))
			}
			for _, smp := range sizes {
				if !strings.HasPrefix(smp.labels["table"], "act_") || smp.value <= 0 {
					t.Errorf("table size %v = %v", smp.labels, smp.value)
				}
			}
		} else if n := len(e.samples(catalog.CamundaEngineTableBytes)); n != 0 {
			t.Errorf("REST mode: %d table sizes, want none (the REST API does not tell)", n)
		}
	}

	// Cleanup now, run by hand (the job executor is off).
	var job struct{ ID string }
	s.ok(s.c.Do(s.ctx, http.MethodPost, "/history/cleanup?immediatelyDue=true", nil, &job))
	if job.ID == "" {
		t.Fatal("engine: POST /history/cleanup returned no job")
	}
	resp, err := s.c.Raw(s.ctx, http.MethodPost, "/job/"+job.ID+"/execute", nil, "")
	s.ok(err)
	if resp.Status != http.StatusNoContent {
		t.Fatalf("engine: executing the cleanup job: HTTP %d %s", resp.Status, resp.Body)
	}
	n, err := s.c.Count(s.ctx, "/history/process-instance/count", url.Values{"processDefinitionKey": {s.key}})
	s.ok(err)
	if n != 0 {
		t.Fatalf("engine: %d historic instances of %s left after cleanup, want 0", n, s.key)
	}
	for _, e := range exps {
		e.collect()
		want("cleaned up", e, catalog.CamundaHistoryCleanable, s.key, 0)
		want("cleaned up", e, catalog.CamundaHistoryFinished, s.key, 0)
		want("cleaned up", e, catalog.CamundaHistoryWithoutTTL, noTTL, 2)
		if v := e.must(catalog.CamundaHistoryCleanupJobs, map[string]string{"engine": "e1"}); v < 1 {
			t.Errorf("cleaned up: camunda_history_cleanup_jobs = %v, want at least the one run", v)
		}
	}
}
