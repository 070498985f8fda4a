package collectors

import (
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
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

// otherHistory turns history log counts into the topic="other" counters.
// The folded topics cannot be counted by name, so their raw count is a
// difference: the engine-wide count minus the reported topics' counts, taken
// in separate requests seconds apart. That difference wobbles: a reported
// topic's task completing between the requests, or history cleanup removing
// a reported topic's entries between them, moves it and moves it back in the
// next collection. Positive deltas alone would turn every wobble into a
// permanent increase, so:
//
//   - the engine-wide counts are taken before the reported topics' counts
//     (otherHistoryCounts): entries written in between only lower the
//     difference;
//   - the baseline is the highest difference seen, never lowered by a
//     falling difference, so a dip and its recovery count nothing;
//   - history cleanup is the one thing that lowers the true difference for
//     good (a baseline never lowered would then freeze the counters until new
//     entries make up for the removed ones, for ever under a history time to
//     live). A collection in which the engine-wide count or a reported
//     topic's count fell saw a cleanup: it counts nothing for "other" (its
//     difference may be off by what cleanup removed between the requests)
//     and re-bases on its difference.
//
// The result undercounts (a dip, the entries of a collection that saw a
// cleanup, a cleanup that lowers no count but the folded topics' own until
// new entries make up for it) and overcounts only by what cleanup removed
// from a reported topic between its request and the engine-wide one when
// that topic's count still rose overall, or when a re-basing happens during
// a dip (at most the reported topics' entries written in those seconds).
type otherHistory struct {
	based bool
	all   [2]int64   // engine-wide raw counts (failures, completions) of the last collection
	base  [2]int64   // the highest difference since the last re-basing
	total [2]float64 // the counters
}

// update takes the engine-wide counts, the sum of the reported topics'
// counts, and whether a reported topic's count fell since the previous
// collection (each as failures, completions).
func (o *otherHistory) update(all, reported [2]int64, reportedFell [2]bool) {
	for i := range all {
		diff := max(0, all[i]-reported[i])
		switch {
		case !o.based, reportedFell[i], all[i] < o.all[i]:
			o.base[i] = diff
		case diff > o.base[i]:
			o.total[i] += float64(diff - o.base[i])
			o.base[i] = diff
		}
		o.all[i] = all[i]
	}
	o.based = true
}

// otherHistoryCounts reads the engine-wide failure and completion counts,
// before the reported topics' counts (see otherHistory).
func (k *collection) otherHistoryCounts() ([2]int64, error) {
	c := k.c
	fail, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{Log: camunda.LogFailure})
	if err != nil {
		return [2]int64{}, err
	}
	succ, err := c.client.CountExternalTaskLog(k.ctx, camunda.HistoryLogQuery{Log: camunda.LogSuccess})
	if err != nil {
		return [2]int64{}, err
	}
	return [2]int64{fail, succ}, nil
}

// otherHistoryEmit updates and emits the topic="other" counters.
func (k *collection) otherHistoryEmit(all, reported [2]int64, reportedFell [2]bool) {
	o := &k.st.other
	o.update(all, reported, reportedFell)
	k.counter(catalog.CamundaExternalTaskFailures, o.total[0], k.c.engine, fold.Other)
	k.counter(catalog.CamundaExternalTaskCompletions, o.total[1], k.c.engine, fold.Other)
}
