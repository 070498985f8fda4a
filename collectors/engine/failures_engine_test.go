//go:build !pgonly

package engine_test

import (
	"net/url"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/signature"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// scenarioFailureGroups: failures whose messages differ only in ids and
// numbers count as one cause in camunda_external_task_failures_by_error_total
// and in the status page's failure groups; a different cause stays apart;
// the groups add up to camunda_external_task_failures_total and to the
// engine's own failure log. The twin in engine-database mode must report
// the same series and groups (camExporter.collect).
func scenarioFailureGroups(s *scenario) {
	t := s.t
	s.start(6)
	w1, w2 := s.worker("w1"), s.worker("w2")
	a := s.fetch(w1, time.Minute, 2)
	b := s.fetch(w2, time.Minute, 2)
	c := s.fetch(w2, time.Minute, 2)
	timeouts := []string{"order 4711 timed out after 30012 ms", "order 4712 timed out after 30007 ms", "order 4713 timed out after 29998 ms"}
	refused := `payment service "pay-eu-1" answered HTTP 503 for order 4714`
	// Apart in time, so that the latest of each group is known (the
	// history log's timestamps have milliseconds).
	for _, f := range []struct {
		w   *engineclient.Worker
		id  string
		msg string
		// retries 0: out of retries, an incident with the message
		retries int
	}{{w1, a[0].ID, timeouts[0], 2}, {w1, a[1].ID, timeouts[1], 2}, {w2, b[0].ID, timeouts[2], 2}, {w2, b[1].ID, refused, 2},
		{w2, c[0].ID, "order 4715 timed out after 30001 ms", 0}, {w2, c[1].ID, "order 4716 timed out after 30002 ms", 0}} {
		s.ok(f.w.Failure(s.ctx, f.id, f.retries, time.Minute, f.msg))
		time.Sleep(20 * time.Millisecond)
	}
	s.exp.collect()

	timeoutSig, refusedSig := signature.Of(timeouts[0]), signature.Of(refused)
	if timeoutSig != "order <n> timed out after <n> ms" || refusedSig != "payment service <q> answered HTTP 503 for order <n>" {
		t.Fatalf("signatures %q and %q", timeoutSig, refusedSig)
	}
	byError := func(sig string) float64 {
		t.Helper()
		return s.exp.must(catalog.CamundaExternalTaskFailuresByError, map[string]string{"engine": "e1", "topic": s.topic, "error": sig})
	}
	if got := byError(timeoutSig); got != 5 {
		t.Errorf("failures by error %q = %v, want 5 (messages that differ only in ids)", timeoutSig, got)
	}
	if got := byError(refusedSig); got != 1 {
		t.Errorf("failures by error %q = %v, want 1", refusedSig, got)
	}
	var sum float64
	for _, smp := range filterTopic(s.exp.samples(catalog.CamundaExternalTaskFailuresByError), s.topic) {
		sum += smp.value
	}
	n, err := s.c.Count(s.ctx, "/history/external-task-log/count", url.Values{"topicName": {s.topic}, "failureLog": {"true"}})
	s.ok(err)
	if total := s.counter(catalog.CamundaExternalTaskFailures); sum != total || n != 6 || total != 6 {
		t.Errorf("failures by error add up to %v, failures_total %v, engine's failure log %d; want 6 each", sum, total, n)
	}

	// The status page's groups: the timeout's five failures by two
	// workers, the latest of them as the example.
	groups := map[string]struct {
		count, workers int
		example        string
	}{}
	for _, it := range s.exp.statusLists()[vocab.KindTaskFailureGroups].Items {
		if it.Topic == s.topic {
			groups[it.ErrorSignature] = struct {
				count, workers int
				example        string
			}{it.Count, it.DistinctWorkers, it.ExternalTaskID}
			if it.Since == nil || it.LastSeen == nil || it.LastSeen.Before(*it.Since) {
				t.Errorf("group %q: first %v, last %v", it.ErrorSignature, it.Since, it.LastSeen)
			}
		}
	}
	if g := groups[timeoutSig]; g.count != 5 || g.workers != 2 || g.example != c[1].ID {
		t.Errorf("failure group %q = %+v, want 5 failures by 2 workers, latest task %s", timeoutSig, g, c[1].ID)
	}
	if g := groups[refusedSig]; g.count != 1 || g.workers != 1 || g.example != b[1].ID {
		t.Errorf("failure group %q = %+v, want 1 failure by 1 worker, task %s", refusedSig, g, b[1].ID)
	}
	if len(groups) != 2 {
		t.Errorf("%d failure groups for the topic, want 2: %+v", len(groups), groups)
	}

	// The two incidents (retries exhausted), with the failures' messages:
	// one group of the process definition.
	var incs []collectors.Item
	for _, it := range s.exp.statusLists()[vocab.KindIncidentGroups].Items {
		if it.ProcessDefinitionKey == s.key {
			incs = append(incs, it)
		}
	}
	if len(incs) != 1 || incs[0].ErrorSignature != timeoutSig || incs[0].Count != 2 || incs[0].IncidentType != "failedExternalTask" ||
		incs[0].ProcessInstanceID != c[1].ProcessInstanceID {
		t.Errorf("incident groups of %s: %+v, want one %q of 2 failedExternalTask incidents, the newest in %s", s.key, incs, timeoutSig, c[1].ProcessInstanceID)
	}
}
