package rest

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// The oldest waiting task of each topic, on every engine version
// (capability/waitingage.go says where each creation comes from):
//
//   - the engine returns createTime (7.24, Operaton): the topic's
//     fetchable tasks sorted by createTime, the first one (1 request);
//   - the engine sorts by createTime but does not return it (7.21 to
//     7.23): the first one sorted, then the start of its historic activity
//     instance, by id (2 requests; history level activity or higher);
//   - the engine does neither (7.20 and older; sortBy=createTime is HTTP
//     400): the topic's fetchable tasks listed by id within what
//     max_listed_tasks leaves after the in-flight lists, then per
//     activity of a process definition version among them the unfinished
//     activity instances oldest first, until one of the listed tasks'
//     (usually one page each, at most oldestPages): exact while every
//     fetchable task of the topic is listed, the oldest of the listed ones
//     otherwise (OldestPartial);
//   - at history level none (or unknown) on an engine that does not return
//     createTime: the fetchable tasks listed by id, dated by the collector
//     with the first collection that saw each (Undated).
//
// Which of these an engine version needs is learned from its answers
// (taskTimes), once per version, so a fork with its own version numbers
// needs no table.

// taskTimes is what the reader learned of an engine version's external
// tasks' createTime: whether GET /external-task sorts by it and returns it.
// Concurrent readings of one engine share it.
type taskTimes struct {
	logger *slog.Logger
	engine string

	mu      sync.Mutex
	version string
	known   bool
	t       capability.TaskTimes
}

// get returns what is known of the version (ok false: nothing yet).
func (s *taskTimes) get(version string) (capability.TaskTimes, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version != version || !s.known {
		return capability.TaskTimes{}, false
	}
	return s.t, true
}

// learn records what the engine version showed, with one log line when it
// lacks the field.
func (s *taskTimes) learn(version string, t capability.TaskTimes, level capability.Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.version == version && s.known {
		return
	}
	s.version, s.known, s.t = version, true, t
	if t.Field {
		return
	}
	how := "the start of each oldest task's historic activity instance"
	if !t.Sort {
		how = "the fetchable tasks listed by id (max_listed_tasks) and the oldest unfinished historic activity instance among them"
	}
	s.logger.Info("camunda: external tasks carry no createTime (Camunda 7.24+ and Operaton return it); camunda_external_task_oldest_waiting_age_seconds comes from "+how+
		" (history level activity or higher), else from the first collection that saw each task (a lower bound)",
		"engine", s.engine, "sorts_by_create_time", t.Sort, "history_level", level.String())
}

// oldestWaiting reads the oldest fetchable task of each topic that has one.
// On an engine version not yet known, the first topic's sorted request
// tells what the version shows before the others are read.
func (x *restRead) oldestWaiting(ctx context.Context) error {
	var todo []string
	for _, t := range x.present {
		if x.out.Topics[t].Counts.Fetchable() > 0 {
			todo = append(todo, t)
		}
	}
	times, known := x.r.times.get(x.rq.Version)
	if len(todo) == 0 {
		// Nothing waits (every age is 0): what the version would show
		// is what Camunda's release of it shows, if it is one.
		if !known {
			times, known = capability.TaskTimesOf(x.rq.Version)
		}
		x.out.Age = x.ageSource(times, known)
		return nil
	}
	// probed are the sorted lists the probes read, by topic.
	probed := map[string][]camunda.ExternalTask{}
	for _, t := range todo {
		if known {
			break
		}
		tasks, learnt, ok, err := x.probeTimes(ctx, t)
		if err != nil {
			return err
		}
		probed[t] = tasks
		if ok {
			times, known = learnt, true
			x.r.times.learn(x.rq.Version, times, x.rq.Level)
		}
	}
	if !known {
		// Every topic's tasks were fetched since they were counted.
		x.out.Age = capability.AgeNone
		return nil
	}
	x.out.Age = x.ageSource(times, true)
	// The listed paths share what max_listed_tasks leaves after the
	// in-flight lists, in topic order, so the same tasks stay in view.
	takes := map[string]int{}
	if x.out.Age == capability.AgeFromFirstSeen || !times.Sort {
		for _, t := range todo {
			take := min(x.out.Topics[t].Counts.Fetchable(), int64(x.budget))
			x.budget -= int(take)
			takes[t] = int(take)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	for _, t := range todo {
		tr := x.out.Topics[t]
		switch {
		case x.out.Age == capability.AgeFromFirstSeen:
			g.Go(func() error { return x.undated(gctx, t, tr, takes[t]) })
		case !times.Sort:
			g.Go(func() error { return x.oldestListed(gctx, t, tr, takes[t]) })
		default:
			done, ok := probed[t]
			g.Go(func() error { return x.oldestSorted(gctx, t, tr, done, ok) })
		}
	}
	return g.Wait()
}

// ageSource is where this reading dates the oldest tasks, by what the
// engine version shows and the history level.
func (x *restRead) ageSource(t capability.TaskTimes, known bool) capability.AgeSource {
	if !known {
		return capability.AgeNone
	}
	return capability.WaitingAgeSource(t, false, x.rq.Level)
}

// probeTimes asks for the oldest fetchable task of topic sorted by
// createTime: HTTP 400 says the engine cannot sort by it, an answer without
// the field that it sorts but does not return it (ok: learnt says so). The
// answer is the topic's sorted list, when there is one; an empty one (its
// tasks fetched since they were counted) tells nothing.
func (x *restRead) probeTimes(ctx context.Context, topic string) (tasks []camunda.ExternalTask, learnt capability.TaskTimes, ok bool, err error) {
	tasks, err = x.oldestFetchable(ctx, topic, x.out.Topics[topic])
	switch {
	case camunda.IsStatus(err, http.StatusBadRequest):
		return nil, capability.TaskTimes{}, true, nil
	case err != nil:
		return nil, capability.TaskTimes{}, false, err
	case len(tasks) == 0:
		return tasks, capability.TaskTimes{}, false, nil
	}
	return tasks, capability.TaskTimes{Sort: true, Field: tasks[0].CreateTime != nil}, true, nil
}

// oldestSorted reads the topic's oldest fetchable task sorted by createTime
// (done: the probe read it already) and dates it: its createTime, else the
// start of its historic activity instance.
func (x *restRead) oldestSorted(ctx context.Context, topic string, tr *reading.TopicRead, tasks []camunda.ExternalTask, done bool) error {
	if !done {
		var err error
		if tasks, err = x.oldestFetchable(ctx, topic, tr); err != nil {
			return err
		}
	}
	if len(tasks) == 0 {
		return nil // fetched since it was counted, or beyond oldestPages
	}
	tk := tasks[0]
	if tk.CreateTime != nil {
		x.set(tr, tk.CreateTime.Time)
		return nil
	}
	start, ok, err := x.activityStart(ctx, tk.ActivityInstanceID)
	if err != nil {
		return err
	}
	if !ok {
		// No instance (history level below activity, or removed): the
		// age is not known rather than made up.
		x.mu.Lock()
		tr.OldestUnknown = true
		x.mu.Unlock()
		return nil
	}
	x.set(tr, start)
	return nil
}

// set records the topic's oldest creation.
func (x *restRead) set(tr *reading.TopicRead, created time.Time) {
	x.mu.Lock()
	tr.Oldest = created
	x.mu.Unlock()
}

// activityStart is the start of a historic activity instance, by id (the
// primary key of ACT_HI_ACTINST); ok is false when the engine has none.
func (x *restRead) activityStart(ctx context.Context, id string) (time.Time, bool, error) {
	if id == "" {
		return time.Time{}, false, nil
	}
	got, err := x.r.client.ListHistoricActivityInstances(ctx, camunda.HistoricActivityInstanceQuery{ActivityInstanceID: id}, camunda.Page{MaxResults: 1})
	if err != nil || len(got) == 0 {
		return time.Time{}, false, err
	}
	return got[0].StartTime.Time, true, nil
}

// listFetchable lists up to take fetchable tasks of the topic key, by id;
// cut says the topic has more.
func (x *restRead) listFetchable(ctx context.Context, key string, tr *reading.TopicRead, take int) ([]camunda.ExternalTask, bool, error) {
	if take == 0 {
		return nil, tr.Counts.Fetchable() > 0, nil
	}
	tasks, cut, err := x.listKey(ctx, key, qFetchable, take)
	return tasks, cut || int64(take) < tr.Counts.Fetchable(), err
}

// undated lists the topic's fetchable tasks for the collector to date by
// the first collection that saw each.
func (x *restRead) undated(ctx context.Context, key string, tr *reading.TopicRead, take int) error {
	tasks, cut, err := x.listFetchable(ctx, key, tr, take)
	if err != nil {
		return err
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	x.mu.Lock()
	tr.Undated, tr.UndatedCut = ids, cut
	x.mu.Unlock()
	return nil
}

// oldestListed dates the topic's oldest fetchable task on an engine that
// cannot sort by createTime: its fetchable tasks listed by id, then per
// activity of a process definition version among them (a group) the
// unfinished historic activity instances oldest first, until one of the
// listed tasks'. The engine's index on ACT_HI_ACTINST (PROC_DEF_ID_,
// END_TIME_) serves the request (unfinished: END_TIME_ null), so it reads
// the definition's open instances, not its history.
func (x *restRead) oldestListed(ctx context.Context, key string, tr *reading.TopicRead, take int) error {
	tasks, cut, err := x.listFetchable(ctx, key, tr, take)
	if err != nil {
		return err
	}
	type group struct{ def, act string }
	listed := map[string]bool{}
	var groups []group
	seen := map[group]bool{}
	for _, t := range tasks {
		listed[t.ActivityInstanceID] = true
		gr := group{t.ProcessDefinitionID, t.ActivityID}
		if !seen[gr] {
			seen[gr] = true
			groups = append(groups, gr)
		}
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].def != groups[j].def {
			return groups[i].def < groups[j].def
		}
		return groups[i].act < groups[j].act
	})
	var oldest time.Time
	partial := cut
	for _, gr := range groups {
		start, found, err := x.oldestOfGroup(ctx, gr.def, gr.act, listed)
		if err != nil {
			return err
		}
		if !found {
			partial = true
			continue
		}
		if oldest.IsZero() || start.Before(oldest) {
			oldest = start
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if oldest.IsZero() {
		tr.OldestUnknown = true
		return nil
	}
	tr.Oldest, tr.OldestPartial = oldest, partial
	return nil
}

// oldestOfGroup pages through the unfinished activity instances of one
// activity of one process definition version, oldest first, for the first
// of the listed ones, at most oldestPages pages.
func (x *restRead) oldestOfGroup(ctx context.Context, def, act string, listed map[string]bool) (time.Time, bool, error) {
	q := camunda.HistoricActivityInstanceQuery{ProcessDefinitionID: def, ActivityID: act, Unfinished: true}
	byStart := camunda.Sort{By: camunda.ActivityInstanceSortStartTime, Order: camunda.Ascending}
	size := x.r.scanPage()
	for page := range oldestPages {
		items, err := x.r.client.ListHistoricActivityInstances(ctx, q, camunda.Page{FirstResult: page * size, MaxResults: size, Sort: byStart})
		if err != nil {
			return time.Time{}, false, err
		}
		for _, a := range items {
			if listed[a.ID] {
				return a.StartTime.Time, true, nil
			}
		}
		if len(items) < size {
			break
		}
	}
	return time.Time{}, false, nil
}

// WaitingAgeSource implements reading.Reader: what the engine version
// showed the readings, else what one sorted request of any fetchable task
// shows, else (no task waits) what Camunda's release of that version
// shows (capability.TaskTimesOf).
func (r *Reader) WaitingAgeSource(ctx context.Context, at reading.Probe) (capability.AgeSource, string, error) {
	if t, ok := r.times.get(at.Version); ok {
		return capability.WaitingAgeSource(t, false, at.Level), "", nil
	}
	byCreate := camunda.Sort{By: camunda.ExternalTaskSortCreateTime, Order: camunda.Ascending}
	tasks, err := r.client.ListExternalTasks(ctx, qFetchable(""), camunda.Page{MaxResults: 1, Sort: byCreate})
	switch {
	case camunda.IsStatus(err, http.StatusBadRequest):
		return capability.WaitingAgeSource(capability.TaskTimes{}, false, at.Level), "GET /external-task?sortBy=createTime answers HTTP 400", nil
	case err != nil:
		return capability.AgeNone, "", err
	case len(tasks) > 0:
		t := capability.TaskTimes{Sort: true, Field: tasks[0].CreateTime != nil}
		why := "GET /external-task returns createTime"
		if !t.Field {
			why = "GET /external-task sorts by createTime but does not return it"
		}
		return capability.WaitingAgeSource(t, false, at.Level), why, nil
	}
	if t, ok := capability.TaskTimesOf(at.Version); ok {
		return capability.WaitingAgeSource(t, false, at.Level), "no task waits to show it; by Camunda " + at.Version + "'s release", nil
	}
	return capability.AgeNone, "no task waits to show it, and version " + at.Version + " is no Camunda 7 release the exporter knows", nil
}
