package collectors

import (
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// historyCounter turns the external task history log counts of one topic
// (GET /history/external-task-log/count?topicName=X&failureLog=true, and
// successLog=true) into counters. The raw counts are gauges: history
// cleanup deletes entries and lowers them. Only positive deltas are added,
// so a counter never goes down; entries written in the same interval as a
// cleanup that removed more are lost (an undercount, never an overcount).
// The first reading of a topic is a baseline: the counter starts at 0, so an
// exporter restart does not replay the engine's whole history into rate().
type historyCounter struct {
	failRaw, succRaw      int64
	failures, completions float64
	based                 bool
}

func (h *historyCounter) update(fail, succ int64) {
	if !h.based {
		h.failRaw, h.succRaw, h.based = fail, succ, true
		return
	}
	if d := fail - h.failRaw; d > 0 {
		h.failures += float64(d)
	}
	if d := succ - h.succRaw; d > 0 {
		h.completions += float64(d)
	}
	h.failRaw, h.succRaw = fail, succ
}

// history reads and emits one topic's failure and completion counters and
// returns the raw counts and how many failures were logged since the
// previous collection (0 on the first reading of the topic).
func (k *collection) history(topic string) ([2]int64, int64, error) {
	c := k.c
	fail, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{TopicName: topic, Log: camunda.LogFailure})
	if err != nil {
		return [2]int64{}, 0, err
	}
	succ, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{TopicName: topic, Log: camunda.LogSuccess})
	if err != nil {
		return [2]int64{}, 0, err
	}
	var newFailures int64
	if h := k.st.history[topic]; h != nil && h.based {
		newFailures = max(0, fail-h.failRaw)
	}
	k.historyEmit(topic, fail, succ)
	return [2]int64{fail, succ}, newFailures, nil
}

// recentFailures returns the ids of the tasks of a topic named by its n most
// recent failure log entries (n: failures logged since the previous
// collection), reading at most one page: one request, only when n > 0.
func (k *collection) recentFailures(topic string, n int64) (map[string]bool, error) {
	if n <= 0 {
		return nil, nil
	}
	c := k.c
	size := int(min(n, int64(c.client.DefaultPageSize())))
	entries, err := c.client.ListExternalTaskLog(k.ctx, camunda.HistoryLogQuery{TopicName: topic, Log: camunda.LogFailure},
		camunda.Page{MaxResults: size, Sort: camunda.Sort{By: camunda.ExternalTaskLogSortTimestamp, Order: camunda.Descending}})
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(entries))
	for _, e := range entries {
		ids[e.ExternalTaskID] = true
	}
	return ids, nil
}

func (k *collection) historyEmit(label string, fail, succ int64) {
	h := k.st.history[label]
	if h == nil {
		h = &historyCounter{}
		k.st.history[label] = h
	}
	h.update(fail, succ)
	k.counter(catalog.CamundaExternalTaskFailures, h.failures, k.c.engine, label)
	k.counter(catalog.CamundaExternalTaskCompletions, h.completions, k.c.engine, label)
}
