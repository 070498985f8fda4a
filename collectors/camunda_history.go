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
// returns the raw counts.
func (k *collection) history(topic string) ([2]int64, error) {
	c := k.c
	fail, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{TopicName: topic, Log: camunda.LogFailure})
	if err != nil {
		return [2]int64{}, err
	}
	succ, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{TopicName: topic, Log: camunda.LogSuccess})
	if err != nil {
		return [2]int64{}, err
	}
	k.historyEmit(topic, fail, succ)
	return [2]int64{fail, succ}, nil
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
